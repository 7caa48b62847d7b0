/// `pushfleet-hotpath <workload> <count>`: one fixed workload of a hot path, in process and
/// without I/O, for instruction and allocation counts. benchmarks/hotpaths.sh runs it under
/// valgrind at two counts and reports the difference per item, so set-up cost drops out.
///
/// Workloads:
/// - `apns-send`: one notification through the APNs client's send path (``APNsSendPathWorkload``);
/// - `apns-send-collapse`: the same with an `apns-collapse-id` of 36 bytes, as a campaign's alerts
///   carry their job id (a UUID when the API assigned it);
/// - `apns-send-badge`: the same as `apns-send-collapse`, each request with its device's own badge
///   (its payload put together per device, as a campaign with a kept badge sends);
/// - `chunk-encode`, `chunk-decode`: one 1,000-token message of `push.deliveries` written by the
///   expand stage, read by the send stage (``DeliveryChunkWorkload``).
import Foundation

enum Workload: String, CaseIterable {
    case apnsSend = "apns-send"
    case apnsSendCollapse = "apns-send-collapse"
    case apnsSendBadge = "apns-send-badge"
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
    case .apnsSend, .apnsSendCollapse, .apnsSendBadge:
        let collapseID = workload == .apnsSend ? nil : "5d1c0f6e-8a43-4b7e-9f2a-3c6d8e1b0a97"
        let accepted = try APNsSendPathWorkload(count: count, collapseID: collapseID, keptBadge: workload == .apnsSendBadge).run()
        guard accepted == count else { fail("\(workload.rawValue): \(accepted) of \(count) notifications answered 200") }
        print("\(workload.rawValue): \(accepted) notifications answered 200")
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
