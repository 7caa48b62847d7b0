/// Why the simulator could not do what it was asked.
public struct APNsSimulatorError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong.
    public struct Code: Hashable, Sendable {
        fileprivate let name: String
        /// Client certificates need the CA's private key, which a given identity may lack.
        public static let noCertificateAuthorityKey = Code(name: "noCertificateAuthorityKey")
        /// ``APNsSimulator/start()`` was called twice or after shutdown.
        public static let notStartable = Code(name: "notStartable")
        /// The simulator has not been started.
        public static let notRunning = Code(name: "notRunning")
    }

    public let code: Code
    public let file: String
    public let line: Int

    public init(_ code: Code, file: String = #fileID, line: Int = #line) {
        self.code = code
        self.file = file
        self.line = line
    }

    public static var noCertificateAuthorityKey: Self { Self(.noCertificateAuthorityKey) }
    public static var notStartable: Self { Self(.notStartable) }
    public static var notRunning: Self { Self(.notRunning) }

    public var description: String { "APNsSimulatorError.\(code.name) (\(file):\(line))" }
}
