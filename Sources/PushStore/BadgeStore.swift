import FlowControl
public import PushCore
import Redis

/// The keys of one range of an app's kept badges: device ids `range × 65,536 ..< (range + 1) ×
/// 65,536`, in their own hash slot `{badge:<app>:<range>}` (as a job's sent state is split,
/// ``SentRangeKeyspace``), so that the badges of a large app spread over the cluster and no key
/// holds more than one range. The range, a number, is last in the tag: no two (app, range)
/// pairs share a key, whatever an app id holds.
struct BadgeRangeKeyspace: Sendable {
    /// Device ids per range.
    static let positions = SentRangeKeyspace.positions

    /// `pf:{badge:<app>:<range>}:`
    let base: String

    init(app: String, range: Int) {
        base = "pf:{badge:\(app):\(range)}:"
    }

    /// STRING: each device's badge, an unsigned 16-bit number at `BITFIELD` offset
    /// `#(id mod 65,536)` (128 KiB for a whole range). Kept without expiry.
    var counts: String { base + "counts" }
    /// STRING, a bitmap: bit `id mod 65,536` is set once the job counted the device's badge
    /// (its badge marker). Expires with the job's other keys.
    func counted(jobID: String) -> String { base + "job:" + jobID }

    static func range(of device: UInt32) -> Int { Int(device) / positions }
    static func offset(of device: UInt32) -> Int { Int(device) % positions }
}

/// Each registered device's badge number, kept by the server for the campaigns whose
/// `aps.badge` is a rule (``BadgeRule``), and set by the app when it is opened.
///
/// A campaign's rule is applied to a device once: the number and the job's badge marker for the
/// device change in one script, so a notification sent again (a chunk delivered twice after a
/// crash, a resend) carries the device's number without counting again. The number is counted
/// before the notification goes to APNs, which it must carry; what was counted and then not sent
/// is taken back (``revoke(_:app:jobID:devices:)``). A notification refused by APNs, or given up
/// after its retries, leaves its count.
package final class BadgeStore: Sendable {
    let client: any RedisCommands
    /// How long a job's badge markers are kept (the TTL of the job's keys).
    let markerTimeToLiveMilliseconds: Int64
    /// The marker keys this process gave their TTL lately: a `PEXPIRE` per call would be a
    /// third of the script's commands.
    private let refreshed: RecentRefreshes

    /// Devices per script call: with their offsets the `BITFIELD` arguments stay below Lua's
    /// `unpack` limit of 8,000.
    static let devicesPerCall = 900

    package init(client: any RedisCommands, markerTimeToLive: Duration = .seconds(7 * 86_400)) {
        self.client = client
        precondition(markerTimeToLive >= .milliseconds(1), "markerTimeToLive must be at least 1 ms")
        self.markerTimeToLiveMilliseconds = markerTimeToLive.wholeMilliseconds
        self.refreshed = RecentRefreshes(timeToLive: markerTimeToLive)
    }

    /// What ``apply(_:app:jobID:devices:)`` did to one device.
    package struct Applied: Sendable, Hashable {
        /// The device's number after the job's rule.
        package var badge: Int
        /// Whether this call counted it (the job had not counted it before): what
        /// ``revoke(_:app:jobID:devices:)`` may take back.
        package var counted: Bool

        package init(badge: Int, counted: Bool) {
            self.badge = badge
            self.counted = counted
        }
    }

    /// Applies `rule` of job `jobID` to each of `devices` (ids of the app's registry) that the
    /// job has not counted yet, and answers each device's number after it, in their order: one
    /// script per range of ids and 900 devices, pipelined. A device the job counted before
    /// answers its current number.
    ///
    /// - Throws: ``StoreError`` naming `app` or `jobID`; `RedisClientError`.
    package func apply(_ rule: BadgeRule, app: String, jobID: String, devices: [UInt32]) async throws -> [Applied] {
        var applied = [Applied](repeating: Applied(badge: 0, counted: false), count: devices.count)
        for (indexes, reply) in try await run(BadgeScripts.apply, rule, app: app, jobID: jobID, devices: devices, settingTTL: true) {
            guard let values = reply.array, values.count == 2 * indexes.count else {
                throw StoreError.unexpected(reply, from: "the badge script")
            }
            for (position, index) in indexes.enumerated() {
                guard let badge = values[2 * position].int, let counted = values[2 * position + 1].int else {
                    throw StoreError.unexpected(reply, from: "the badge script")
                }
                applied[index] = Applied(badge: Int(badge), counted: counted == 1)
            }
        }
        return applied
    }

    /// Takes back what `rule` of job `jobID` counted for `devices`, as if the job had never
    /// reached them: their badge markers cleared, and an increment subtracted (not below 0); a
    /// `set` leaves the number. For the devices a call of ``apply(_:app:jobID:devices:)`` counted
    /// and whose notifications were then not sent (the job stopped). Answers how many markers
    /// were set.
    ///
    /// - Throws: ``StoreError`` naming `app` or `jobID`; `RedisClientError`.
    @discardableResult
    package func revoke(_ rule: BadgeRule, app: String, jobID: String, devices: [UInt32]) async throws -> Int {
        var revoked = 0
        for (_, reply) in try await run(BadgeScripts.revoke, rule, app: app, jobID: jobID, devices: devices, settingTTL: false) {
            guard let count = reply.int else { throw StoreError.unexpected(reply, from: "the badge revoke script") }
            revoked += Int(count)
        }
        return revoked
    }

    /// Runs `script` for `devices`: one call per range of ids and 900 devices, pipelined, each
    /// with the range's counts and the job's markers as keys and, as arguments, the markers'
    /// TTL (when `settingTTL`; 0 when this process gave it lately), the rule's mode and amount
    /// and the devices' offsets. Answers each call's reply with the indexes of its devices.
    private func run(
        _ script: RedisScript, _ rule: BadgeRule, app: String, jobID: String, devices: [UInt32], settingTTL: Bool
    ) async throws -> [(indexes: ArraySlice<Int>, reply: RedisReply)] {
        try StoreValidation.app(app)
        try StoreValidation.jobID(jobID)
        guard !devices.isEmpty else { return [] }
        let (mode, amount): (RedisArgument, Int) =
            switch rule {
            case .increment(let amount): ("increment", amount)
            case .set(let value): ("set", value)
            }
        var groups: [Int: [Int]] = [:]
        for (index, device) in devices.enumerated() {
            groups[BadgeRangeKeyspace.range(of: device), default: []].append(index)
        }
        var calls: [RedisScriptCall] = []
        var callIndexes: [ArraySlice<Int>] = []
        let now = ContinuousClock.now
        let ranges = groups.keys.sorted()
        let markerKeys = ranges.map { BadgeRangeKeyspace(app: app, range: $0).counted(jobID: jobID) }
        let stale = settingTTL ? refreshed.due(markerKeys, at: now) : []
        for (range, markers) in zip(ranges, markerKeys) {
            let indexes = groups[range]!
            let keys = BadgeRangeKeyspace(app: app, range: range)
            // A TTL of 0: the key has its TTL from this process's call a moment ago.
            let ttl = stale.contains(markers) ? String(markerTimeToLiveMilliseconds) : "0"
            for start in stride(from: 0, to: indexes.count, by: Self.devicesPerCall) {
                let part = indexes[start..<min(start + Self.devicesPerCall, indexes.count)]
                var arguments: [RedisArgument] = [.string(ttl), mode, .integer(amount)]
                arguments.reserveCapacity(3 + part.count)
                for index in part { arguments.append(.integer(BadgeRangeKeyspace.offset(of: devices[index]))) }
                calls.append(RedisScriptCall(script, keys: [.string(keys.counts), .string(markers)], arguments: arguments))
                callIndexes.append(part)
            }
        }
        let replies = try await client.runScripts(calls)
        refreshed.record(stale, at: now)
        return Array(zip(callIndexes, replies))
    }

    /// Sets the badge of device `device` of `app` to `value` (0 to ``BadgeRule/maxValue``).
    ///
    /// - Throws: ``StoreError`` naming `app` or `badge`; `RedisClientError`.
    package func set(app: String, device: UInt32, to value: Int) async throws {
        try StoreValidation.app(app)
        try Self.validate(value)
        let keys = BadgeRangeKeyspace(app: app, range: BadgeRangeKeyspace.range(of: device))
        _ = try await client.checkedPipeline([
            ["BITFIELD", .string(keys.counts), "SET", "u16", .string("#\(BadgeRangeKeyspace.offset(of: device))"), .integer(value)]
        ])
    }

    /// The badge of device `device` of `app` (0 when none was ever counted or set).
    ///
    /// - Throws: ``StoreError`` naming `app`; `RedisClientError`.
    package func badge(app: String, device: UInt32) async throws -> Int {
        try StoreValidation.app(app)
        let keys = BadgeRangeKeyspace(app: app, range: BadgeRangeKeyspace.range(of: device))
        let reply = try await client.checkedPipeline([
            ["BITFIELD", .string(keys.counts), "GET", "u16", .string("#\(BadgeRangeKeyspace.offset(of: device))")]
        ])[0]
        guard let value = reply.array?.first?.int else { throw StoreError.unexpected(reply, from: "BITFIELD GET of a badge") }
        return Int(value)
    }

    /// Checks a badge number an app sets.
    ///
    /// - Throws: ``StoreError`` (`invalidArgument`, field `badge`).
    package static func validate(_ value: Int) throws(StoreError) {
        guard BadgeRule.numbers.contains(value) else {
            throw StoreError(.invalidArgument, field: "badge", message: "must be 0 to \(BadgeRule.maxValue), is \(value)")
        }
    }
}

enum BadgeScripts {
    /// Applies a job's badge rule to devices of one range: sets each device's badge marker of the
    /// job (one `BITFIELD` of `SET u1`s, which answer the previous bits), then, in one more
    /// `BITFIELD`, counts the devices whose marker was not set (`INCRBY` saturating at 65,535, or
    /// `SET`) and reads the others (`GET`). A device listed twice counts once. Sets the markers'
    /// TTL unless it is 0.
    ///
    /// KEYS: the range's badges, the job's markers in the range. ARGV: TTL ms (0: leave it), `increment` or
    /// `set`, the amount, then the devices' offsets in the range. Returns each device's badge
    /// after the call and whether the call counted it (1) or the job had before (0), in pairs, in
    /// order.
    static let apply = RedisScript(
        """
        local increment, amount = ARGV[2] == 'increment', tonumber(ARGV[3])
        local count = #ARGV - 3
        local markers = {}
        for k = 1, count do
          markers[#markers + 1] = 'SET'
          markers[#markers + 1] = 'u1'
          markers[#markers + 1] = ARGV[3 + k]
          markers[#markers + 1] = '1'
        end
        local before = redis.call('BITFIELD', KEYS[2], unpack(markers))
        if ARGV[1] ~= '0' then redis.call('PEXPIRE', KEYS[2], ARGV[1]) end
        local operations = {'OVERFLOW', 'SAT'}
        for k = 1, count do
          local at = '#' .. ARGV[3 + k]
          if before[k] == 0 and increment then
            operations[#operations + 1] = 'INCRBY'
            operations[#operations + 1] = 'u16'
            operations[#operations + 1] = at
            operations[#operations + 1] = ARGV[3]
          elseif before[k] == 0 then
            operations[#operations + 1] = 'SET'
            operations[#operations + 1] = 'u16'
            operations[#operations + 1] = at
            operations[#operations + 1] = ARGV[3]
          else
            operations[#operations + 1] = 'GET'
            operations[#operations + 1] = 'u16'
            operations[#operations + 1] = at
          end
        end
        local answers = redis.call('BITFIELD', KEYS[1], unpack(operations))
        local out = {}
        for k = 1, count do
          -- SET answers the previous value; the device's badge is now the amount.
          if before[k] == 0 and not increment then answers[k] = amount end
          out[2 * k - 1] = answers[k]
          out[2 * k] = 1 - before[k]
        end
        return out
        """
    )

    /// Takes back a job's counts of devices of one range: clears their badge markers (one
    /// `BITFIELD` of `SET u1 0`s, answering the previous bits) and, for an increment, subtracts
    /// the amount (saturating at 0) from the devices whose marker was set, in one more `BITFIELD`.
    ///
    /// KEYS: the range's badges, the job's markers in the range. ARGV: (unused), `increment` or
    /// `set`, the amount, then the devices' offsets in the range. Returns how many markers were set.
    static let revoke = RedisScript(
        """
        local increment, amount = ARGV[2] == 'increment', tonumber(ARGV[3])
        local markers = {}
        for k = 4, #ARGV do
          markers[#markers + 1] = 'SET'
          markers[#markers + 1] = 'u1'
          markers[#markers + 1] = ARGV[k]
          markers[#markers + 1] = '0'
        end
        local before = redis.call('BITFIELD', KEYS[2], unpack(markers))
        local operations, revoked = {'OVERFLOW', 'SAT'}, 0
        for k = 4, #ARGV do
          if before[k - 3] == 1 then
            revoked = revoked + 1
            if increment then
              operations[#operations + 1] = 'INCRBY'
              operations[#operations + 1] = 'u16'
              operations[#operations + 1] = '#' .. ARGV[k]
              operations[#operations + 1] = -amount
            end
          end
        end
        if #operations > 2 then redis.call('BITFIELD', KEYS[1], unpack(operations)) end
        return revoked
        """
    )
}
