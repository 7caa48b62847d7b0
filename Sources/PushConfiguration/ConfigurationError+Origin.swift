extension ConfigurationError {
    /// The key used for problems with the configuration file as a whole.
    static let fileKey = "(file)"

    /// Creates an error located by `origin`: a file line, or a note naming the environment variable
    /// the value came from.
    init(key: String, message: String, origin: ConfigOrigin) {
        switch origin {
        case .file(let line):
            self.init(key: key, message: message, line: line)
        case .environment(let variable):
            self.init(key: key, message: "\(message) (set by \(variable))")
        }
    }
}
