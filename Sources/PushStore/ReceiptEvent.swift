/// What a device reports about a notification it received: counted per job, each device once.
package enum ReceiptEvent: String, Sendable, Hashable, CaseIterable {
    /// The app's notification service extension ran: the notification reached the device.
    case delivered
    /// The user opened the notification.
    case opened
}
