/// `pushfleet-hotpath <workload> <count>`: one fixed workload of a hot path, in process and
/// without I/O, for instruction and allocation counts. benchmarks/hotpaths.sh runs it under
/// valgrind at two counts and reports the difference per item, so set-up cost drops out.
///
/// Workloads:
/// - `apns-send`: one notification through the APNs client's send path (``APNsSendPathWorkload``);
/// - `chunk-encode`, `chunk-decode`: one 1,000-token message of `push.deliveries` written by the
///   expand stage, read by the send stage (``DeliveryChunkWorkload``).
import Foundation

enum Workload: String, CaseIterable {
    case apnsSend = "apns-send"
    case chunkEncode = "chunk-encode"
    case chunkDecode = "chunk-decode"
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data((message + "\n").utf8))
    exit(1)
}

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count == 2, let workload = Workload(rawValue: arguments.first!), let count = Int(arguments.last!), count > 0 else {
    fail("usage: pushfleet-hotpath <\(Workload.allCases.map(\.rawValue).joined(separator: "|"))> <count>")
}
do {
    switch workload {
    case .apnsSend:
        let accepted = try APNsSendPathWorkload(count: count).run()
        guard accepted == count else { fail("apns-send: \(accepted) of \(count) notifications answered 200") }
        print("apns-send: \(accepted) notifications answered 200")
    case .chunkEncode:
        let bytes = try DeliveryChunkWorkload(count: count).encode()
        print("chunk-encode: \(count) chunks, \(bytes) bytes")
    case .chunkDecode:
        let tokens = try DeliveryChunkWorkload(count: count).decode()
        guard tokens == count * DeliveryChunkWorkload.tokensPerChunk else { fail("chunk-decode: \(tokens) tokens read") }
        print("chunk-decode: \(count) chunks, \(tokens) tokens")
    }
} catch {
    fail("\(workload.rawValue): \(error)")
}
