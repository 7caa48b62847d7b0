/// A Redis Cluster's shards as `CLUSTER SHARDS` (Redis ≥ 7.0) describes them: each shard's slot
/// ranges and nodes, one of them the master.
public struct RedisClusterTopology: Hashable, Sendable {
    /// Where a node listens.
    public struct Address: Hashable, Sendable, CustomStringConvertible {
        public var host: String
        public var port: Int

        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// Parses `host:port` (the last `:` separates the port, so an IPv6 host may hold `:`s).
        public init?(_ text: some StringProtocol) {
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
                (1...65_535).contains(port), colon != text.startIndex
            else { return nil }
            host = String(text[..<colon])
            self.port = port
        }

        public var description: String { "\(host):\(port)" }
    }

    public struct Node: Hashable, Sendable {
        public enum Role: String, Hashable, Sendable {
            case master, replica
        }

        /// The node's id in the cluster (40 hex digits).
        public var id: String
        public var address: Address
        public var role: Role
        /// `online`, `failed` or `loading`.
        public var health: String

        public init(id: String, address: Address, role: Role, health: String) {
            self.id = id
            self.address = address
            self.role = role
            self.health = health
        }
    }

    public struct Shard: Hashable, Sendable {
        /// The shard's slot ranges (inclusive).
        public var slots: [ClosedRange<Int>]
        public var nodes: [Node]

        public init(slots: [ClosedRange<Int>], nodes: [Node]) {
            self.slots = slots
            self.nodes = nodes
        }

        /// The shard's master, when it has one.
        public var master: Node? { nodes.first { $0.role == .master } }
    }

    public var shards: [Shard]

    public init(shards: [Shard]) {
        self.shards = shards
    }

    /// The masters that serve slots, in shard order.
    public var masters: [Node] {
        shards.compactMap { $0.slots.isEmpty ? nil : $0.master }
    }

    /// How many slots have a master.
    public var coveredSlots: Int {
        shards.reduce(0) { total, shard in
            shard.master == nil ? total : total + shard.slots.reduce(0) { $0 + $1.count }
        }
    }
}

extension RedisClusterTopology {
    /// Reads a `CLUSTER SHARDS` answer: an array of shards, each a flat list of field names and
    /// values (`slots`: a flat list of range starts and ends, integers, or strings on Redis 7.0;
    /// `nodes`: a list of nodes, each a flat list with `id`, `port`, `ip`, `endpoint`,
    /// `hostname`, `role`, `health`, …). A node is reached at its `endpoint`, or its `ip` when
    /// the endpoint is unknown (`?`) or empty.
    ///
    /// - Throws: ``RedisClientError`` (`protocolError`) naming what does not fit.
    public init(clusterShards reply: RedisReply) throws(RedisClientError) {
        func malformed(_ what: String) -> RedisClientError {
            RedisClientError(.protocolError, message: "CLUSTER SHARDS answered something else than shards: \(what)")
        }
        guard let shardReplies = reply.array else { throw malformed("not an array: \(reply)") }
        var shards: [Shard] = []
        for shardReply in shardReplies {
            guard let fields = Self.fields(shardReply) else { throw malformed("a shard is not a list of fields") }
            guard let slotReplies = fields["slots"]?.array, slotReplies.count.isMultiple(of: 2) else {
                throw malformed("a shard without its slots")
            }
            var slots: [ClosedRange<Int>] = []
            for index in stride(from: 0, to: slotReplies.count, by: 2) {
                guard let start = slotReplies[index].int, let end = slotReplies[index + 1].int, 0 <= start, start <= end,
                    end < RedisHashSlot.count
                else { throw malformed("slot range \(slotReplies[index]) \(slotReplies[index + 1])") }
                slots.append(Int(start)...Int(end))
            }
            guard let nodeReplies = fields["nodes"]?.array else { throw malformed("a shard without its nodes") }
            var nodes: [Node] = []
            for nodeReply in nodeReplies {
                guard let node = Self.fields(nodeReply), let id = node["id"]?.string, let port = node["port"]?.int,
                    let roleText = node["role"]?.string, let role = Node.Role(rawValue: roleText)
                else { throw malformed("a node without id, port or role") }
                let endpoint = node["endpoint"]?.string
                guard let host = endpoint.flatMap({ $0.isEmpty || $0 == "?" ? nil : $0 }) ?? node["ip"]?.string else {
                    throw malformed("node \(id) without an address")
                }
                nodes.append(
                    Node(id: id, address: Address(host: host, port: Int(port)), role: role, health: node["health"]?.string ?? "online"))
            }
            shards.append(Shard(slots: slots, nodes: nodes))
        }
        self.init(shards: shards)
    }

    /// A flat list of field names and values as a dictionary; `nil` when it is not one.
    private static func fields(_ reply: RedisReply) -> [String: RedisReply]? {
        guard let items = reply.array, items.count.isMultiple(of: 2) else { return nil }
        var fields: [String: RedisReply] = [:]
        for index in stride(from: 0, to: items.count, by: 2) {
            guard let name = items[index].string else { return nil }
            fields[name] = items[index + 1]
        }
        return fields
    }
}
