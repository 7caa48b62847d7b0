import Foundation
import Redis

/// What the benchmarks read of processes and servers: CPU seconds (user + system, from
/// `getrusage` or /proc), memory, open files, and Redis's `used_memory`.
enum ResourceUsage {
    /// This process.
    static func selfCPUSeconds() -> Double { cpuSeconds(RUSAGE_SELF) }

    /// Terminated and waited-for children.
    static func childrenCPUSeconds() -> Double { cpuSeconds(RUSAGE_CHILDREN) }

    private static func cpuSeconds(_ who: __rusage_who) -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(who.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// User + system CPU seconds of another process, from /proc/<pid>/stat.
    static func cpuSeconds(ofProcess pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let afterName = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: afterName)...].split(separator: " ")
        // Fields after the name start at "state" (field 3); utime and stime are fields 14 and 15.
        guard fields.count > 13, let utime = Double(fields[11]), let stime = Double(fields[12]) else { return 0 }
        return (utime + stime) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A field of /proc/<pid>/status in kB: `VmRSS` (resident now) or `VmHWM` (the peak).
    static func memoryKilobytes(_ pid: Int32, field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return 0 }
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
    }

    /// Open file descriptors of a process (the entries of /proc/<pid>/fd); 0 when it is gone.
    static func openFiles(_ pid: Int32) -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
    }

    /// `used_memory` of the server, or the sum over a cluster's masters.
    static func redisUsedMemory(_ client: any RedisCommands) async throws -> Int {
        Int(try await redisInfo(client, section: "memory")["used_memory"] ?? 0)
    }

    /// The numeric fields of an `INFO` section of the server, or their sums over a cluster's
    /// masters (`stats`: `total_commands_processed`, `total_net_input_bytes`, …; `cpu`:
    /// `used_cpu_user`, `used_cpu_sys`).
    static func redisInfo(_ client: any RedisCommands, section: String) async throws -> [String: Double] {
        let infos: [RedisReply]
        if let cluster = client as? RedisClusterClient {
            infos = try await cluster.sendToEveryMaster(["INFO", .string(section)]).map(\.1)
        } else {
            infos = [try await client.send("INFO", .string(section))]
        }
        var fields: [String: Double] = [:]
        for info in infos {
            for line in info.string?.split(whereSeparator: \.isNewline) ?? [] {
                let parts = line.split(separator: ":", maxSplits: 1)
                guard parts.count == 2 else { continue }
                if let value = Double(parts[1]) {
                    fields[String(parts[0]), default: 0] += value
                } else if parts[0].hasPrefix("cmdstat_"), let calls = parts[1].split(separator: ",").first?.split(separator: "=").last,
                    let value = Double(calls)
                {
                    // commandstats: `cmdstat_get:calls=12,usec=…`
                    fields[String(parts[0].dropFirst("cmdstat_".count)), default: 0] += value
                }
            }
        }
        return fields
    }
}
