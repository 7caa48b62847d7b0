import APNsCore
public import Foundation

extension PushJob {
    /// Parses, decodes and validates a job from its JSON bytes.
    ///
    /// Every failure names the field at fault: `$` with ``MessageValidationError/Code/malformedJSON``
    /// when the bytes are not JSON, otherwise the path of the offending value.
    public static func decodeAndValidate(from data: Data) throws(MessageValidationError) -> PushJob {
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            throw MessageValidationError(FieldPath.root, .malformedJSON, error.description)
        }
        let job = try PushJob(json: json)
        try job.validate()
        return job
    }

    /// Checks the rules a decoded (or hand-built) job must meet before it is published:
    /// identifier lengths, a non-empty audience of at most 10,000 tokens, a tag expression that
    /// selects something, header values and their combination with the push type, throttle
    /// ranges, and the payload (`aps` present and well-typed, size within the push type's
    /// limit).
    public func validate() throws(MessageValidationError) {
        try validate(inChunk: false)
    }

    /// ``validate()``, or, `inChunk`, the rules of a job as a delivery chunk carries it: its
    /// audience is the chunk's tokens, whatever the job addressed.
    func validate(inChunk: Bool) throws(MessageValidationError) {
        let root = FieldPath.root
        try Self.validateIdentifier(app, at: root.key("app"))
        if let id {
            try Self.validateIdentifier(id, at: root.key("id"))
        }
        try audience.validate(at: root.key("audience"))
        try headers.validate(at: root.key("headers"))
        if case .channel = audience {
            try Self.validateChannelHeaders(headers, at: root.key("headers"))
        }
        if case .activity = audience, headers.pushType != .liveactivity {
            throw MessageValidationError(
                root.key("headers").key("push-type"), .invalidValue,
                "must be liveactivity for an activity audience (its update tokens take nothing else), is \(headers.pushType)")
        }
        if case .area = audience, tokenKind != .device {
            throw MessageValidationError(
                root.key("headers").key("push-type"), .invalidValue,
                "an area audience is of device tokens (locations are reported for them), not \(tokenKind.description) tokens")
        }
        if sendAtDevice != nil {
            switch audience {
            case .channel, .activity:
                throw MessageValidationError(
                    root.key("send-at"), .invalidValue,
                    "a send at each device's own time needs devices of the registry or listed tokens, not a \(audience.kind) audience")
            case .tokens, .openIDs, .tags, .broadcast, .area:
                break
            }
            if recall != nil {
                throw MessageValidationError(root.key("send-at"), .invalidValue, "a recall goes out at once")
            }
        }
        try throttle?.validate(at: root.key("throttle"))
        if let idempotencyKey {
            try Self.validateIdentifier(idempotencyKey, at: root.key("idempotency-key"))
        }
        if let name {
            try Self.validateIdentifier(name, at: root.key("name"))
            if name.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
                throw MessageValidationError(root.key("name"), .invalidValue, "must not hold control characters")
            }
        }
        try notification.validate(at: root.key("notification"), pushType: headers.pushType)
        if notification.badgeRule != nil {
            try validateKeptBadge(at: root.key("notification").key("aps").key("badge"), inChunk: inChunk)
        }
        if let recall {
            try Self.validateIdentifier(recall.jobID, at: root.key("recall").key("job"))
            try recall.validate(self)
        }
        if delivery != .apns {
            try validateOnlineDelivery(at: root.key("delivery"))
        }
        if headers.pushType == .liveactivity, notification.aps?["event"]?.stringValue == "start" {
            guard notification.aps?["attributes-type"] != nil else {
                throw MessageValidationError(
                    root.key("notification").key("aps").key("attributes-type"), .missingField,
                    "is required to start a Live Activity: it names the ActivityAttributes type (and the push-to-start tokens the job goes to)")
            }
        }
    }

    /// The online channel carries what an open app shows itself: alert and background pushes to
    /// device tokens, sent as they are (no badge the server keeps, which counts APNs sends, and no
    /// recall, which withdraws what APNs delivered).
    private func validateOnlineDelivery(at path: FieldPath) throws(MessageValidationError) {
        guard headers.pushType == .alert || headers.pushType == .background else {
            throw MessageValidationError(
                path, .invalidValue, "\(delivery.rawValue) takes alert and background pushes, not \(headers.pushType); use apns")
        }
        guard tokenKind == .device else {
            throw MessageValidationError(
                path, .invalidValue,
                "\(delivery.rawValue) reaches devices that connect to a gateway: device tokens, not \(tokenKind.description) tokens")
        }
        switch audience {
        case .channel, .activity:
            throw MessageValidationError(path, .invalidValue, "\(delivery.rawValue) reaches devices, not a \(audience.kind) audience")
        case .tokens, .openIDs, .tags, .broadcast, .area:
            break
        }
        if notification.badgeRule != nil {
            throw MessageValidationError(
                path, .invalidValue, "a badge kept by the server counts APNs sends: give a number with \(delivery.rawValue), or use apns")
        }
        if recall != nil {
            throw MessageValidationError(path, .invalidValue, "a recall withdraws what APNs delivered: it goes through apns")
        }
    }

    /// A badge the server keeps is a device's number in the registry: the job goes to devices of
    /// the registry (openids, tags, broadcast) with device tokens, and is not a recall (an
    /// overwrite replaces a notification already counted). A chunk's tokens are such devices,
    /// at their ids.
    private func validateKeptBadge(at path: FieldPath, inChunk: Bool) throws(MessageValidationError) {
        switch audience {
        case .openIDs, .tags, .broadcast, .area:
            break
        case .tokens where inChunk:
            break
        case .tokens, .channel, .activity:
            throw MessageValidationError(
                path, .invalidValue,
                "a badge kept by the server (increment or set) needs an audience of registered devices (openids, tags, broadcast or an area), "
                    + "not \(audience.kind); give a number instead")
        }
        guard tokenKind == .device else {
            throw MessageValidationError(
                path, .invalidValue, "a badge kept by the server is a device's: it takes device tokens, not \(tokenKind.description) tokens")
        }
        guard recall == nil else {
            throw MessageValidationError(
                path, .invalidValue, "an overwrite replaces a notification already counted: give a number instead of increment or set")
        }
    }

    /// A broadcast on a channel is a Live Activity update sent to `/4/broadcasts`: push type
    /// `liveactivity`, and no topic or collapse id (the request carries neither).
    private static func validateChannelHeaders(_ headers: PushHeaders, at path: FieldPath) throws(MessageValidationError) {
        guard headers.pushType == .liveactivity else {
            throw MessageValidationError(
                path.key("push-type"), .invalidValue, "must be liveactivity for a channel audience, is \(headers.pushType)")
        }
        if headers.topic != nil {
            throw MessageValidationError(
                path.key("topic"), .invalidValue, "must be absent for a channel audience: a broadcast names the app's bundle id")
        }
        if headers.collapseID != nil {
            throw MessageValidationError(
                path.key("collapse-id"), .invalidValue, "must be absent for a channel audience: broadcasts take no collapse id")
        }
    }

    private static func validateIdentifier(_ value: String, at path: FieldPath) throws(MessageValidationError) {
        let length = value.unicodeScalars.count
        guard (1...maxIdentifierLength).contains(length) else {
            throw MessageValidationError(
                path, .invalidValue, "must be 1 to \(maxIdentifierLength) characters, has \(length)")
        }
    }
}
