import Foundation
import Spawn
import Testing

@Suite("Child processes over posix_spawn")
struct ChildProcessTests {
    /// A file for a child's output, and a descriptor of it to hand over.
    final class OutputFile {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("pushfleet-spawn-\(UUID().uuidString)")
        let handle: FileHandle

        init() throws {
            FileManager.default.createFile(atPath: url.path, contents: nil)
            handle = try FileHandle(forWritingTo: url)
        }

        var text: String { (try? String(contentsOf: url, encoding: .utf8)) ?? "" }

        deinit {
            try? handle.close()
            try? FileManager.default.removeItem(at: url)
        }
    }

    @Test("the exit status, a signal, and terminate()")
    func termination() async throws {
        #expect(try await ChildProcess(executable: "/bin/sh", arguments: ["-c", "exit 3"]).exited() == .exited(3))
        #expect(try await ChildProcess(executable: "/bin/sh", arguments: ["-c", "kill -KILL $$"]).exited() == .signalled(SIGKILL))
        let sleeper = try ChildProcess(executable: "/bin/sleep", arguments: ["30"])
        #expect(sleeper.isRunning)
        sleeper.terminate()
        #expect(await sleeper.exited() == .signalled(SIGTERM), "SIGTERM reaches the child: its signal mask is empty")
        #expect(!sleeper.isRunning)
        #expect(sleeper.waitUntilExit() == .signalled(SIGTERM))
    }

    @Test("standard output and error where asked, in the directory and with the environment given")
    func outputDirectoryAndEnvironment() async throws {
        let out = try OutputFile()
        let err = try OutputFile()
        let process = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "pwd; echo \"$GREETING\"; echo oops >&2; cat"], directory: "/tmp",
            environment: ["GREETING": "hello", "PATH": "/usr/bin:/bin"], output: .descriptor(out.handle.fileDescriptor),
            error: .descriptor(err.handle.fileDescriptor))
        #expect(await process.exited() == .exited(0), "standard input is /dev/null: cat ends at once")
        #expect(out.text == "/tmp\nhello\n")
        #expect(err.text == "oops\n")
    }

    @Test("the parent's other descriptors stay with the parent")
    func descriptorsAreNotInherited() async throws {
        let open = Foundation.open("/dev/null", O_RDONLY)  // not close-on-exec
        #expect(open > 2)
        defer { close(open) }
        let out = try OutputFile()
        let process = try ChildProcess(
            executable: "/bin/sh", arguments: ["-c", "ls /proc/$$/fd"], output: .descriptor(out.handle.fileDescriptor))
        #expect(await process.exited() == .exited(0))
        let descriptors = Set(out.text.split(separator: "\n").compactMap { Int32($0) })
        #expect(descriptors.isSuperset(of: [0, 1, 2]))
        #expect(!descriptors.contains(open), "descriptor \(open) reached the child: \(descriptors.sorted())")
    }

    @Test("an executable that cannot run is an error naming it")
    func missingExecutable() {
        #expect(throws: SpawnError.self) {
            _ = try ChildProcess(executable: "/nonexistent/pushfleet-nothing", arguments: [])
        }
    }
}
