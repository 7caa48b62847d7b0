import Foundation
import PushCore
import Testing

/// A seeded mutation fuzzer: it derives inputs from a corpus of valid and invalid examples by
/// byte-level edits (bit flips, interesting bytes, deletions, duplications, splices, tokens of
/// JSON and YAML) and, for JSON seeds, by structure-aware edits (a value replaced by one of
/// another type, an extreme number, a long or odd string, deep nesting, a key removed or added).
/// Not coverage-guided: it goes wide, from seeds that already reach the decoders' deep paths.
/// Every input follows from the seed, so a failure is replayed with `PUSHFLEET_FUZZ_SEED`.
struct Mutator {
    private var state: UInt64
    let corpus: [[UInt8]]

    init(seed: UInt64, corpus: [[UInt8]]) {
        precondition(!corpus.isEmpty, "a fuzz target needs at least one seed")
        state = seed
        self.corpus = corpus
    }

    /// SplitMix64.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int { bound <= 1 ? 0 : Int(next() % UInt64(bound)) }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    /// The next input: a seed with one to four edits.
    mutating func input() -> [UInt8] {
        var bytes = pick(corpus)
        if below(3) == 0, let structured = structuredEdit(bytes) {
            bytes = structured
        }
        for _ in 0...below(4) {
            edit(&bytes)
        }
        return bytes
    }

    static let interestingBytes: [UInt8] =
        Array("\"\\{}[],:0-+.eE \t\n\r#&*!|>'%".utf8) + [0, 0x7F, 0x80, 0xBF, 0xC0, 0xC3, 0xE2, 0xED, 0xF0, 0xF4, 0xFF]

    static let tokens: [String] = [
        "null", "true", "false", "0", "-0", "1e309", "-1e309", "1.0e-400", "18446744073709551616", "-9223372036854775809",
        "9007199254740993", "\"\"", "\"\\u0000\"", "\"\\ud800\"", "\"\\udc00\\ud800\"", "\"\\uZZZZ\"", "[[[[[[[[", "]]]]", "{\"\":",
        "{}", "[]", "\"aps\"", "\"audience\"", "\"tokens\"", "\"broadcast\"", "\"tags\"", "\"openids\"", "\"headers\"",
        "\"throttle\"", "\"send-at\"", "\"positions\"", "\"chunk\"", "\"environment\"", "\"sandbox\"", "\"production\"",
        "\"2026-02-30T25:61:61Z\"", "\"app\"", "\"id\"", ": ", "- ", "---", "...", "&a ", "*a", "<<: *a", "!!binary ", "!!int ",
        "%YAML 1.2\n", "? ", "|\n", ">-\n", "~", "0x1F", "0o17", ".inf", ".nan", "'", "\t", "\u{FEFF}",
    ]

    private mutating func edit(_ bytes: inout [UInt8]) {
        switch below(9) {
        case 0 where !bytes.isEmpty:
            bytes[below(bytes.count)] ^= 1 << UInt8(below(8))
        case 1 where !bytes.isEmpty:
            bytes[below(bytes.count)] = pick(Self.interestingBytes)
        case 2 where !bytes.isEmpty:
            let start = below(bytes.count)
            bytes.removeSubrange(start..<min(bytes.count, start + 1 + below(16)))
        case 3 where !bytes.isEmpty:
            let start = below(bytes.count)
            let piece = bytes[start..<min(bytes.count, start + 1 + below(32))]
            bytes.insert(contentsOf: piece, at: below(bytes.count + 1))
        case 4:
            bytes.insert(contentsOf: Array(pick(Self.tokens).utf8), at: below(bytes.count + 1))
        case 5:
            let other = pick(corpus)
            let cut = below(bytes.count + 1)
            bytes = Array(bytes.prefix(cut)) + Array(other.suffix(other.count - below(other.count + 1)))
        case 6 where !bytes.isEmpty:
            bytes.removeLast(below(bytes.count) + 1)
        case 7:
            bytes.insert(contentsOf: (0..<(1 + below(8))).map { _ in UInt8(truncatingIfNeeded: next()) }, at: below(bytes.count + 1))
        default:
            if !bytes.isEmpty {
                let at = below(bytes.count)
                bytes.insert(contentsOf: repeatElement(bytes[at], count: 1 + below(64)), at: at)
            }
        }
    }

    /// A JSON seed with one value replaced or one key added or removed; nil for a seed that is
    /// not JSON.
    private mutating func structuredEdit(_ bytes: [UInt8]) -> [UInt8]? {
        guard let value = try? JSONValue(parsing: Data(bytes)) else { return nil }
        return Array(mutated(value, depth: 0).compactData())
    }

    private mutating func mutated(_ value: JSONValue, depth: Int) -> JSONValue {
        switch value {
        case .object(var object) where !object.isEmpty && below(4) != 0:
            let key = pick(object.keys)
            switch below(6) {
            case 0: object[key] = nil
            case 1: object[pick(["id", "app", "extra", "aps", "x", key + "x", ""])] = replacement(depth: depth)
            default: object[key] = mutated(object[key] ?? .null, depth: depth + 1)
            }
            return .object(object)
        case .array(var items) where !items.isEmpty && below(4) != 0:
            let index = below(items.count)
            switch below(5) {
            case 0: items.remove(at: index)
            case 1: items.append(contentsOf: repeatElement(items[index], count: 1 + below(2_000)))
            default: items[index] = mutated(items[index], depth: depth + 1)
            }
            return .array(items)
        default:
            return replacement(depth: depth)
        }
    }

    private mutating func replacement(depth: Int) -> JSONValue {
        switch below(10) {
        case 0: return .null
        case 1: return .bool(below(2) == 0)
        case 2: return .number(JSONNumber(text: pick(["0", "-1", "1e309", "-0", "3.5", "18446744073709551616", "1E-400", "1000001"]))!)
        case 3: return .string("")
        case 4: return .string(String(repeating: pick(["a", "é", "0", "\u{0}", "🙂", "ff"]), count: pick([1, 63, 64, 65, 200, 4_097, 70_000])))
        case 5: return .array([])
        case 6: return .object([:])
        case 7:
            var nested = JSONValue.null
            for _ in 0..<pick([10, 255, 256, 300]) { nested = .array([nested]) }
            return nested
        case 8: return .string(pick(["2026-11-25T10:00:00Z", "sandbox", "production", "alert", "background", "voip", "all", "any", "none"]))
        default:
            let hex = (0..<pick([32, 64, 63, 200])).map { _ in pick(Array("0123456789abcdefABCDEFg")) }
            return .array([.string(String(hex))])
        }
    }
}

/// The fuzz run's size and seed: `PUSHFLEET_FUZZ_ITERATIONS` inputs per target (default 20,000,
/// the bounded run CI makes, a few seconds) from `PUSHFLEET_FUZZ_SEED` (default: a new one each run, printed
/// with every failure so it can be replayed).
enum FuzzRun {
    static let iterations = ProcessInfo.processInfo.environment["PUSHFLEET_FUZZ_ITERATIONS"].flatMap(Int.init) ?? 20_000
    static let seed = ProcessInfo.processInfo.environment["PUSHFLEET_FUZZ_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)

    /// Runs `check` on every seed of `corpus`, then on mutations of them, ``iterations`` inputs in
    /// all, from the run's seed salted with the target's name (FNV-1a), so each target has its
    /// own stream of inputs. `check` gets the mutator for any further choices it draws. Records
    /// each failing input with the seed that replays it, and stops after five.
    ///
    /// The run is seconds of work without a suspension point, so it runs on a thread of its own
    /// (``offCooperativePool(_:)``), and its findings are recorded afterwards, in the test's task.
    static func run(_ target: String, corpus: [[UInt8]], _ check: @escaping @Sendable ([UInt8], inout Mutator) throws -> Void) async {
        let findings = await offCooperativePool { () -> [String] in
            let salt = target.utf8.reduce(UInt64(0xCBF2_9CE4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
            var mutator = Mutator(seed: seed ^ salt, corpus: corpus)
            var findings: [String] = []
            for iteration in 0..<max(iterations, corpus.count) {
                let input = iteration < corpus.count ? corpus[iteration] : mutator.input()
                do {
                    try check(input, &mutator)
                } catch {
                    findings.append("\(target): \(error) — \(describe(input, iteration: iteration))")
                    if findings.count >= 5 { break }
                }
            }
            return findings
        }
        for finding in findings {
            Issue.record(Comment(rawValue: finding))
        }
    }

    /// Runs `body` on the fuzz runs' own thread and returns its result. Swift's cooperative pool
    /// has as many threads as the machine has cores (two on CI): a test that holds one for
    /// seconds of CPU work holds up every other test of the process, in-process servers included
    /// (the fuzz suite on both threads kept an API test's requests waiting past their 30 s
    /// deadline). One serial queue for every run: fuzzing takes at most one core, never a thread
    /// of the pool.
    static func offCooperativePool<Value: Sendable>(_ body: @escaping @Sendable () -> Value) async -> Value {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }

    private static let queue = DispatchQueue(label: "pushfleet.tests.fuzz")

    /// `Tests/FuzzTests/corpus/<name>/`, plus the repository files given by relative path.
    static func corpus(_ name: String, plus repositoryPaths: [String] = []) -> [[UInt8]] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        let repository = root.deletingLastPathComponent().deletingLastPathComponent()
        var files: [URL] = []
        let directory = root.appendingPathComponent("corpus").appendingPathComponent(name)
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()) ?? [] {
            files.append(directory.appendingPathComponent(entry))
        }
        for path in repositoryPaths {
            let url = repository.appendingPathComponent(path)
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
                for entry in (try? FileManager.default.contentsOfDirectory(atPath: url.path).sorted()) ?? [] where entry.hasSuffix(".json") {
                    files.append(url.appendingPathComponent(entry))
                }
            } else {
                files.append(url)
            }
        }
        return files.compactMap { try? Array(Data(contentsOf: $0)) }
    }

    /// How a failing input is shown: the seed, the input's number and the input in base64
    /// (save it under `corpus/<target>/` to keep it as a regression case).
    static func describe(_ input: [UInt8], iteration: Int) -> String {
        let base64 = Data(input).base64EncodedString()
        guard base64.count > 2_000 else { return "seed \(seed), input \(iteration): \(base64)" }
        return "seed \(seed), input \(iteration) (\(input.count) bytes; replay with PUSHFLEET_FUZZ_SEED=\(seed)): \(base64.prefix(2_000))…"
    }
}
