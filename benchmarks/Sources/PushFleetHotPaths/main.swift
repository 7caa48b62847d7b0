/// `pushfleet-hotpath <workload> <count>`: one fixed workload of a hot path, in process and
/// without I/O, for instruction and allocation counts. benchmarks/hotpaths.sh runs it under
/// valgrind at two counts and reports the difference per item, so set-up cost drops out.
///
/// Workloads:
/// - `apns-send`: one notification through the APNs client's send path (``APNsSendPathWorkload``).
import Foundation

enum Workload: String, CaseIterable {
    case apnsSend = "apns-send"
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
    }
} catch {
    fail("\(workload.rawValue): \(error)")
}
