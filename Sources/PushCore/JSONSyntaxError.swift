/// Why bytes are not a JSON text (RFC 8259), and where.
public struct JSONSyntaxError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Zero-based byte offset of the problem.
    public let offset: Int
    /// One-based line of the problem.
    public let line: Int
    /// One-based column (in bytes) of the problem.
    public let column: Int
    /// What is wrong.
    public let reason: String

    public var description: String { "\(reason) at line \(line), column \(column)" }
}
