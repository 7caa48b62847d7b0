import Foundation

// Two builds of one harness (docs/faults.md):
// - `scripts/fuzz.sh` builds it with `-sanitize=fuzzer -parse-as-library -DLIBFUZZER`: libFuzzer
//   supplies `main` and calls `LLVMFuzzerTestOneInput` with inputs it evolves by coverage; the
//   target is named by PUSHFLEET_FUZZ_TARGET. A broken rule stops the run with the rule, and
//   libFuzzer saves the input.
// - Built normally, `pushfleet-fuzz <target> <file>…` replays saved inputs through the same
//   checks and says which broke a rule (exit 1), without the sanitizer.

#if LIBFUZZER
    private let target: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["PUSHFLEET_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            fatalError("PUSHFLEET_FUZZ_TARGET must be one of \(FuzzTarget.allCases.map(\.rawValue)), not '\(name)'")
        }
        return target
    }()

    @_cdecl("LLVMFuzzerTestOneInput")
    public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let input = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            try target.check(input)
        } catch {
            fatalError("\(target.rawValue): \(error)")
        }
        return 0
    }

    /// libFuzzer's driver (compiler-rt), which parses its flags and runs the fuzzing loop.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func runFuzzerDriver(
        _ argc: UnsafeMutablePointer<CInt>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
    ) -> CInt

    /// SwiftPM links an executable's `main` to `<module>_main`; here that is libFuzzer's driver.
    @_cdecl("PushFleetFuzz_main")
    public func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
        var count = argc
        var vector: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
        return runFuzzerDriver(&count, &vector, fuzzOneInput)
    }
#else
    @main
    enum Replay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
                FileHandle.standardError.write(
                    Data("usage: pushfleet-fuzz <\(FuzzTarget.allCases.map(\.rawValue).joined(separator: "|"))> <input file>…\n".utf8))
                exit(2)
            }
            var broken = 0
            for path in arguments.dropFirst() {
                guard let input = FileManager.default.contents(atPath: path) else {
                    FileHandle.standardError.write(Data("\(path): cannot be read\n".utf8))
                    exit(2)
                }
                do {
                    try target.check(Array(input))
                } catch {
                    broken += 1
                    print("\(path): \(error)")
                }
            }
            print("\(arguments.count - 1) inputs, \(broken) broke a rule of \(target.rawValue)")
            exit(broken == 0 ? 0 : 1)
        }
    }
#endif
