import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawn`, for the test rigs and tools that start servers
/// and processes of PushFleet's own from a process holding many descriptors.
///
/// Foundation's `Process.run()` on Linux lists `/proc/self/fd` to close the parent's descriptors
/// in the child, and swift-corelibs-foundation before its fix of May 2026 (swiftlang/swift-
/// corelibs-foundation#5472; Swift 6.3.1 ships without it) copies each entry's 256-byte name
/// field whole: an entry at the end of glibc's buffer reads into the next page, and the parent
/// crashes with a segmentation fault when that page is not mapped. The Swift test process, with
/// over a thousand descriptors open while it starts Redis servers, hit it. This type closes
/// descriptors from 3 up with glibc's `posix_spawn_file_actions_addclosefrom_np` instead, and
/// waits for the child on a thread of its own with `waitpid`.
public final class ChildProcess: Sendable {
    /// How a child ended.
    public enum Termination: Equatable, Sendable {
        case exited(Int32)
        case signalled(Int32)
    }

    /// Where the child's standard output or error goes; its standard input is `/dev/null`.
    public enum Output: Sendable {
        case null
        /// This descriptor of the parent (a log file, say).
        case descriptor(Int32)
    }

    public let processIdentifier: pid_t
    /// Entered until the child is reaped.
    private let running = DispatchGroup()
    private let state = Mutex<(termination: Termination?, waiters: [CheckedContinuation<Termination, Never>])>((nil, []))

    /// Starts `executable` (a path) with `arguments`, in `directory` when given, with
    /// `environment` (the parent's when `nil`); standard error goes where `error` says, else
    /// where standard output goes.
    ///
    /// - Throws: ``SpawnError`` naming the executable and the `errno` of the failure.
    public init(
        executable: String, arguments: [String], directory: String? = nil, environment: [String: String]? = nil,
        output: Output = .null, error: Output? = nil
    ) throws(SpawnError) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        for (target, destination) in [(Int32(1), output), (Int32(2), error ?? output)] {
            switch destination {
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_WRONLY, 0)
            case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        if let directory {
            guard let addChdir = GlibcSpawnExtensions.addChdir else { throw SpawnError(executable, errno: ENOSYS) }
            let result = directory.withCString { addChdir(&actions, $0) }
            guard result == 0 else { throw SpawnError(executable, errno: result) }
        }
        if let addCloseFrom = GlibcSpawnExtensions.addCloseFrom {
            addCloseFrom(&actions, 3)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Its own process group (as Foundation's Process does), an empty signal mask, and
        // SIGPIPE back to its default (the parent ignores it).
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var pipeSignal = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &pipeSignal)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) }
        let envp = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } }
        defer {
            argv.forEach { free($0) }
            envp?.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            if let envp {
                (envp + [nil]).withUnsafeBufferPointer { envBuffer in
                    posix_spawn(&pid, executable, &actions, &attributes, argvBuffer.baseAddress!, envBuffer.baseAddress!)
                }
            } else {
                posix_spawn(&pid, executable, &actions, &attributes, argvBuffer.baseAddress!, environ)
            }
        }
        guard result == 0 else { throw SpawnError(executable, errno: result) }
        processIdentifier = pid
        running.enter()
        let reaper = Reaper(pid: pid, process: self)
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<Reaper>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, Unmanaged.passRetained(reaper).toOpaque())
        precondition(started == 0, "could not start the thread that waits for process \(pid)")
        pthread_detach(thread)
    }

    /// Whether the child has not been reaped yet.
    public var isRunning: Bool { state.withLock { $0.termination == nil } }

    /// How the child ended; `nil` while it runs.
    public var termination: Termination? { state.withLock { $0.termination } }

    /// Sends `signal` to the child while it runs.
    public func signal(_ signal: Int32) {
        guard isRunning else { return }
        kill(processIdentifier, signal)
    }

    /// SIGTERM.
    public func terminate() { signal(SIGTERM) }

    /// Waits for the child to end.
    public func exited() async -> Termination {
        await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Termination? in
                if let termination = state.termination { return termination }
                state.waiters.append(continuation)
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
    }

    /// Blocks the calling thread until the child ends: for synchronous code only, never a task.
    @discardableResult
    public func waitUntilExit() -> Termination {
        running.wait()
        return termination!
    }

    fileprivate func ended(_ termination: Termination) {
        let waiters = state.withLock { state in
            state.termination = termination
            defer { state.waiters = [] }
            return state.waiters
        }
        running.leave()
        for waiter in waiters { waiter.resume(returning: termination) }
    }
}

/// Waits for one child with `waitpid` on a thread of its own.
private final class Reaper {
    let pid: pid_t
    let process: ChildProcess

    init(pid: pid_t, process: ChildProcess) {
        self.pid = pid
        self.process = process
    }

    func run() {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
        let signal = status & 0x7f
        process.ended(signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal))
    }
}

/// The glibc extensions Swift's Glibc module does not declare (they need `_GNU_SOURCE`), looked
/// up at run time.
private enum GlibcSpawnExtensions {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    static let addCloseFrom: AddCloseFrom? = symbol("posix_spawn_file_actions_addclosefrom_np")
    static let addChdir: AddChdir? = symbol("posix_spawn_file_actions_addchdir_np")

    private static func symbol<Function>(_ name: String) -> Function? {
        // A null handle is glibc's RTLD_DEFAULT: the process's global symbols.
        guard let address = dlsym(nil, name) else { return nil }
        return unsafeBitCast(address, to: Function.self)
    }
}

/// A child process could not be started.
public struct SpawnError: Error, CustomStringConvertible {
    public let executable: String
    public let errno: Int32

    init(_ executable: String, errno: Int32) {
        self.executable = executable
        self.errno = errno
    }

    public var description: String { "could not start \(executable): \(String(cString: strerror(errno)))" }
}
