import Foundation
import Synchronization

/// Test hosts of our own on one machine: a network namespace per host, each with one link (a
/// veth pair) into a bridge that lives in a namespace of its own, addresses in 10.213.0.0/24.
/// This process stays in its own namespace and reaches every host through a link of its own
/// (10.213.0.1) that no cut touches: it is the operator's console, not a part of the fleet.
///
/// A cut between two hosts drops every packet between them, silently and in both directions: each
/// host gets a policy rule `from <peer> iif eth0 blackhole` (its local table moved behind it), so
/// nothing arrives and nothing answers, with no reset and no error: what a partition looks like
/// to the processes on either side. Needs root (`ip netns`); `iproute2` from Debian.
final class TestNetwork: Sendable {
    struct Host: Sendable, Hashable {
        var name: String
        /// The host's network namespace.
        var namespace: String
        var address: String
        /// The command that runs a process on this host (`ip netns exec <namespace>`).
        var launcher: [String]
    }

    private struct Pair: Hashable {
        var a: String
        var b: String
        init(_ a: String, _ b: String) { (self.a, self.b) = a < b ? (a, b) : (b, a) }
    }

    static let subnet = "10.213.0"
    /// Namespaces of this suite start with it; a run removes those a crashed run left behind.
    static let namespacePrefix = "pushfleet-"
    private static let rootLink = "pfroot0"

    let hosts: [Host]
    private let bridgeNamespace: String
    private let cuts = Mutex<Set<Pair>>([])

    private init(hosts: [Host], bridgeNamespace: String) {
        self.hosts = hosts
        self.bridgeNamespace = bridgeNamespace
    }

    /// The host named `name`.
    func host(_ name: String) -> Host {
        guard let host = hosts.first(where: { $0.name == name }) else { preconditionFailure("no test host named \(name)") }
        return host
    }

    /// Creates one host per name (10.213.0.11, .12, …, in order) and the link of this process.
    static func create(_ names: [String]) throws -> TestNetwork {
        precondition(names.count < 200 && Set(names).count == names.count, "distinct host names, fewer than 200")
        try removeLeftovers()
        let bridge = namespacePrefix + "bridge"
        try ip(["netns", "add", bridge])
        var hosts: [Host] = []
        do {
            try ip(["-n", bridge, "link", "add", "br0", "type", "bridge"])
            try ip(["-n", bridge, "link", "set", "br0", "up"])
            // This process's link: an address in the subnet, no rules.
            try ip(["link", "add", rootLink, "type", "veth", "peer", "name", "pfrootb"])
            try ip(["link", "set", "pfrootb", "netns", bridge])
            try ip(["-n", bridge, "link", "set", "pfrootb", "master", "br0"])
            try ip(["-n", bridge, "link", "set", "pfrootb", "up"])
            try ip(["addr", "add", "\(subnet).1/24", "dev", rootLink])
            try ip(["link", "set", rootLink, "up"])
            for (index, name) in names.enumerated() {
                let namespace = namespacePrefix + name
                let host = Host(
                    name: name, namespace: namespace, address: "\(subnet).\(11 + index)",
                    launcher: [try locate("ip"), "netns", "exec", namespace])
                try ip(["netns", "add", namespace])
                hosts.append(host)
                let inside = "pfh\(index)"
                let outside = "pfb\(index)"
                try ip(["link", "add", inside, "type", "veth", "peer", "name", outside])
                try ip(["link", "set", inside, "netns", namespace])
                try ip(["link", "set", outside, "netns", bridge])
                try ip(["-n", bridge, "link", "set", outside, "master", "br0"])
                try ip(["-n", bridge, "link", "set", outside, "up"])
                try ip(["-n", namespace, "link", "set", inside, "name", "eth0"])
                try ip(["-n", namespace, "addr", "add", "\(host.address)/24", "dev", "eth0"])
                try ip(["-n", namespace, "link", "set", "eth0", "up"])
                try ip(["-n", namespace, "link", "set", "lo", "up"])
                // The local table after the cut rules: a packet from a cut peer is routed to the
                // blackhole before it is delivered.
                try ip(["-n", namespace, "rule", "add", "pref", "100", "lookup", "local"])
                try ip(["-n", namespace, "rule", "del", "pref", "0"])
            }
        } catch {
            let network = TestNetwork(hosts: hosts, bridgeNamespace: bridge)
            network.destroy()
            throw error
        }
        return TestNetwork(hosts: hosts, bridgeNamespace: bridge)
    }

    /// Cuts every link between a host of `side` and a host of `other`.
    func cut(_ side: [String], from other: [String]) throws {
        for a in side {
            for b in other where a != b {
                guard cuts.withLock({ $0.insert(Pair(a, b)).inserted }) else { continue }
                try rule("add", a, b)
            }
        }
    }

    /// Heals every cut between a host of `side` and a host of `other`.
    func heal(_ side: [String], from other: [String]) throws {
        for a in side {
            for b in other where a != b {
                guard cuts.withLock({ $0.remove(Pair(a, b)) != nil }) else { continue }
                try rule("del", a, b)
            }
        }
    }

    /// Heals every cut.
    func healAll() throws {
        let all = cuts.withLock { $0 }
        for pair in all { try heal([pair.a], from: [pair.b]) }
    }

    /// Names of the hosts other than `names`.
    func hosts(except names: [String]) -> [String] {
        hosts.map(\.name).filter { !names.contains($0) }
    }

    private func rule(_ verb: String, _ a: String, _ b: String) throws {
        let (first, second) = (host(a), host(b))
        try Self.ip(["-n", first.namespace, "rule", verb, "pref", "10", "from", second.address, "iif", "eth0", "blackhole"])
        try Self.ip(["-n", second.namespace, "rule", verb, "pref", "10", "from", first.address, "iif", "eth0", "blackhole"])
    }

    /// Removes every namespace and link. Processes still running on a host keep its namespace
    /// alive until they exit; stop them first.
    func destroy() {
        for host in hosts { try? Self.ip(["netns", "del", host.namespace]) }
        try? Self.ip(["netns", "del", bridgeNamespace])
        try? Self.ip(["link", "del", Self.rootLink])
    }

    /// Removes the namespaces and the link a run that did not finish left behind.
    private static func removeLeftovers() throws {
        let listed = try ip(["netns", "list"])
        for line in listed.split(separator: "\n") {
            let name = String(line.split(separator: " ").first ?? "")
            if name.hasPrefix(namespacePrefix) { try? ip(["netns", "del", name]) }
        }
        if (try? ip(["link", "show", rootLink])) != nil { try? ip(["link", "del", rootLink]) }
    }

    /// Runs `ip` with `arguments`; throws with its error output when it fails.
    @discardableResult
    private static func ip(_ arguments: [String]) throws -> String {
        let output = try BenchmarkProcess.run(try locate("ip"), arguments)
        guard output.status == 0 else {
            throw BenchmarkError.failed(
                "ip \(arguments.joined(separator: " ")) failed (status \(output.status)): "
                    + output.standardError.trimmingCharacters(in: .whitespacesAndNewlines)
                    + " (the partition suite needs root and iproute2)")
        }
        return output.standardOutput
    }

    private static func locate(_ command: String) throws -> String {
        for directory in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] where FileManager.default.isExecutableFile(atPath: "\(directory)/\(command)") {
            return "\(directory)/\(command)"
        }
        throw BenchmarkError.failed("\(command) not found (install iproute2)")
    }
}
