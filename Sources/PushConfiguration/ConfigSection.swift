import Foundation

/// Typed, error-reporting access to one mapping of the configuration tree. A key that is absent or
/// null counts as "not set". Errors name `path.key` and the value's line (or override variable).
/// Type and format errors never quote the value, so a misplaced secret is not echoed.
struct ConfigSection {
    /// The mapping's dotted key path (empty at the top level).
    let path: String
    /// The mapping's entries (empty when the mapping is not set).
    let entries: [ConfigEntry]
    /// Where the mapping was written (used for "is required" errors).
    let origin: ConfigOrigin

    /// Wraps `node` found at `path`; `nil` or null gives an empty section located at `fallback`.
    init(_ node: ConfigNode?, path: String, fallback: ConfigOrigin) throws(ConfigurationError) {
        self.path = path
        guard let node, !node.isNull else {
            entries = []
            origin = fallback
            return
        }
        entries = try ConfigurationSchema.entries(of: node, path: path, expected: "a mapping")
        origin = node.origin
    }

    /// `path.key`.
    func keyPath(_ key: String) -> String { ConfigurationSchema.join(path, key) }

    /// The value at `key`, or `nil` when absent or null.
    func node(_ key: String) -> ConfigNode? {
        guard let node = entries.first(where: { $0.key == key })?.value, !node.isNull else { return nil }
        return node
    }

    /// Whether `key` is set (present and not null).
    func has(_ key: String) -> Bool { node(key) != nil }

    /// The nested mapping at `key` (empty when not set).
    func section(_ key: String) throws(ConfigurationError) -> ConfigSection {
        try ConfigSection(node(key), path: keyPath(key), fallback: origin)
    }

    /// An error about `key` located at its value, or at this mapping when the key is not set.
    func error(_ key: String, _ message: String) -> ConfigurationError {
        ConfigurationError(key: keyPath(key), message: message, origin: node(key)?.origin ?? origin)
    }

    /// The "is required" error for `key`.
    func missing(_ key: String) -> ConfigurationError {
        error(key, "is required")
    }

    // MARK: Strings

    /// The string at `key`: any non-null scalar's text (numbers and booleans as written). Rejects
    /// empty or whitespace-only text.
    func string(_ key: String) throws(ConfigurationError) -> String? {
        guard let node = node(key) else { return nil }
        guard case .scalar(let scalar, _) = node else {
            throw error(key, "expected a string, found \(node.article)")
        }
        guard !scalar.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw error(key, "must not be empty")
        }
        return scalar.text
    }

    /// The string at `key`, which is required.
    func requiredString(_ key: String) throws(ConfigurationError) -> String {
        guard let value = try string(key) else { throw missing(key) }
        return value
    }

    /// The file path at `key`, resolved against `baseDirectory` when relative.
    func path(_ key: String, baseDirectory: String) throws(ConfigurationError) -> String? {
        try string(key).map { Self.resolve($0, against: baseDirectory) }
    }

    /// `path` if absolute, else `path` appended to `baseDirectory` (itself resolved against the current
    /// directory when relative); `.` and `..` components are removed.
    static func resolve(_ path: String, against baseDirectory: String) -> String {
        let base = URL(fileURLWithPath: baseDirectory.isEmpty ? "." : baseDirectory, isDirectory: true)
        return URL(fileURLWithPath: path, relativeTo: base).standardizedFileURL.path
    }

    /// The boolean at `key` (YAML 1.1: `true`/`false`, `yes`/`no`, `on`/`off`), or
    /// `defaultValue` when not set.
    func bool(_ key: String, default defaultValue: Bool) throws(ConfigurationError) -> Bool {
        guard let node = node(key) else { return defaultValue }
        guard case .scalar(let scalar, _) = node, scalar.kind == .bool else {
            throw error(key, "expected true or false, found \(node.article)")
        }
        return ConfigScalarKind.boolValue(scalar.text)
    }

    // MARK: Numbers

    /// The integer at `key`, checked against `minimum` and `maximum`.
    func integer(_ key: String, minimum: Int, maximum: Int? = nil) throws(ConfigurationError) -> Int? {
        guard let node = node(key) else { return nil }
        guard case .scalar(let scalar, _) = node, scalar.kind == .int else {
            throw error(key, "expected an integer, found \(node.article)")
        }
        guard let value = Self.decimalInteger(scalar.text) else {
            throw error(key, "expected a decimal integer within 64-bit range")
        }
        try check(key, value, minimum: minimum, maximum: maximum)
        return value
    }

    /// The integer at `key`, or `defaultValue` when not set.
    func integer(_ key: String, default defaultValue: Int, minimum: Int, maximum: Int? = nil) throws(ConfigurationError) -> Int {
        try integer(key, minimum: minimum, maximum: maximum) ?? defaultValue
    }

    /// The finite number (integer or floating-point) at `key`, at least `minimum`.
    func number(_ key: String, minimum: Double) throws(ConfigurationError) -> Double? {
        guard let node = node(key) else { return nil }
        guard case .scalar(let scalar, _) = node, scalar.kind == .int || scalar.kind == .float else {
            throw error(key, "expected a number, found \(node.article)")
        }
        let value: Double?
        if scalar.kind == .int {
            value = Self.decimalInteger(scalar.text).map(Double.init)
        } else {
            value = Double(scalar.text.replacingOccurrences(of: "_", with: ""))
        }
        guard let value, value.isFinite else {
            throw error(key, "expected a finite decimal number")
        }
        guard value >= minimum else {
            throw error(key, "must be at least \(Self.format(minimum)), got \(Self.format(value))")
        }
        return value
    }

    /// Throws unless `minimum <= value <= maximum`.
    func check(_ key: String, _ value: Int, minimum: Int, maximum: Int?) throws(ConfigurationError) {
        if let maximum, !(minimum...maximum).contains(value) {
            throw error(key, "must be between \(minimum) and \(maximum), got \(value)")
        }
        if value < minimum {
            throw error(key, "must be at least \(minimum), got \(value)")
        }
    }

    /// Parses a YAML integer written in decimal (or `0x` hexadecimal), allowing `_` separators.
    /// Octal, binary and sexagesimal forms, and leading zeros, are rejected as ambiguous.
    static func decimalInteger(_ text: String) -> Int? {
        var digits = Substring(text.replacingOccurrences(of: "_", with: ""))
        var sign = ""
        if let first = digits.first, first == "-" || first == "+" {
            sign = first == "-" ? "-" : ""
            digits = digits.dropFirst()
        }
        if digits.hasPrefix("0x") {
            return Int(sign + digits.dropFirst(2), radix: 16)
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isWholeNumber }), digits == "0" || digits.first != "0" else {
            return nil
        }
        return Int(sign + digits, radix: 10)
    }

    /// A number for messages: integral values without a fraction.
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}
