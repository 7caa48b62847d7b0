import APNsCore
import Testing

@testable import PushCore

@Suite("Receipt hours and time zone names")
struct ReceiptHoursTests {
    @Test func theBestHourIsTheMostReadOneOnceThereAreEnoughReceipts() {
        var bytes = [UInt8](repeating: 0, count: 24)
        #expect(ReceiptHours(bytes: bytes).bestHour == nil)
        bytes[9] = 2
        #expect(ReceiptHours(bytes: bytes).bestHour == nil, "two receipts are too few")
        bytes[20] = 2
        // A tie goes to the earlier hour.
        #expect(ReceiptHours(bytes: bytes).bestHour == 9)
        bytes[20] = 3
        #expect(ReceiptHours(bytes: bytes).bestHour == 20)
        #expect(ReceiptHours(bytes: bytes).total == 5)
    }

    @Test func anythingButTwentyFourBytesReadsAsNoReceipts() {
        for bytes in [[], [UInt8](repeating: 7, count: 23), [UInt8](repeating: 7, count: 25)] {
            let hours = ReceiptHours(bytes: bytes)
            #expect(hours.total == 0 && hours.counts.count == 24 && hours.bestHour == nil)
        }
    }

    @Test(arguments: ["Europe/Paris", "America/Argentina/Buenos_Aires", "Asia/Kolkata", "UTC", "GMT", "Etc/GMT-14"])
    func namesOfTheDatabaseAreTimeZones(_ name: String) {
        #expect(TimeZoneName.problem(name) == nil)
        #expect(TimeZoneName.timeZone(name) != nil)
    }

    @Test(arguments: ["", "Mars/Olympus", "europe/paris", "GMT+5", "UTC+1", "+05:00", String(repeating: "A", count: 65)])
    func othersAreNot(_ name: String) {
        #expect(TimeZoneName.timeZone(name) == nil)
        #expect(TimeZoneName.problem(name)?.contains("is not a time zone of the IANA database") == true)
    }
}
