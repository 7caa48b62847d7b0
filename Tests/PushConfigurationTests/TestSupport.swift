import Foundation
import PushConfiguration

/// The smallest valid configuration: `apps` is last so app keys can be appended with 4 spaces.
let minimalYAML = """
    kafka:
      bootstrap-servers: "broker:9092"
    apps:
      news:
        bundle-id: com.example.news
        auth:
          token: {team-id: ABCDE12345, key-id: KEY1234567, key-file: AuthKey.p8}

    """

/// The base directory used by tests that do not touch files.
let testBaseDirectory = "/etc/pushfleet"

/// Parses `yaml` with `environment`, resolving relative paths against ``testBaseDirectory``.
func parse(_ yaml: String, environment: [String: String] = [:]) throws(ConfigurationError) -> PushFleetConfiguration {
    try PushFleetConfiguration.parse(yaml: yaml, baseDirectory: testBaseDirectory, environment: environment)
}

/// The error parsing `yaml` throws, or `nil` if it parses.
func parseError(_ yaml: String, environment: [String: String] = [:]) -> ConfigurationError? {
    do {
        _ = try parse(yaml, environment: environment)
        return nil
    } catch {
        return error
    }
}

/// `minimalYAML` with `section:` / `key: value` prepended.
func withSection(_ section: String, _ key: String, _ value: String) -> String {
    "\(section):\n  \(key): \(value)\n" + minimalYAML
}

/// `minimalYAML` with `key: value` added to app `news`.
func withAppKey(_ key: String, _ value: String) -> String {
    minimalYAML + "    \(key): \(value)\n"
}

/// A temporary directory, removed by ``remove()``.
struct TemporaryDirectory {
    /// The directory's absolute path.
    let path: String

    /// Creates a fresh, empty directory.
    init() throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("pushconfig-\(UUID().uuidString)", isDirectory: true).path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    /// Writes `contents` to `name` inside the directory and returns the file's path.
    @discardableResult
    func write(_ name: String, _ contents: String) throws -> String {
        let file = (path as NSString).appendingPathComponent(name)
        try FileManager.default.createDirectory(
            atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try contents.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    /// Deletes the directory and everything in it.
    func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
