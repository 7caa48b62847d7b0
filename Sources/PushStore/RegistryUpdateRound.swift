import APNsCore
import Redis

/// Where one ``DeviceRegistry/update(app:tokens:assumeAbsent:_:)`` stands between its rounds:
/// the devices still pending, the records they were last found as, and what became of the
/// others. Pure: it turns records and the caller's rule into patches, and the apply-patches
/// script's replies into outcomes and what to do next; `update` reads, writes and waits.
struct RegistryUpdateRound {
    typealias Located = DeviceRegistry.Located
    typealias Patch = DeviceRegistry.Patch
    typealias RecordChange = DeviceRegistry.RecordChange
    typealias RecordUpdate = DeviceRegistry.RecordUpdate

    /// What `update` does once a round's writes are answered.
    enum Next: Equatable, Sendable {
        /// Every device has its outcome (``results``).
        case done
        /// Devices changed meanwhile or moved: read those not known (``unread``), compute again.
        case again
        /// A shard belongs to a newer layout: read the layout, then every pending record.
        case staleLayout
        /// A reshard fences devices for a moment: wait, then compute them again.
        case fenced
    }

    /// The patches of one script call: at most ``DeviceRegistry/patchesPerCall``, one shard.
    struct Write: Sendable {
        var shard: Int
        var patches: [Patch]
    }

    let tokens: [DeviceToken]
    private var outcomes: [RecordUpdate?]
    /// The indexes (in ``tokens``) of the devices without an outcome yet.
    private(set) var pending: [Int]
    /// Where each pending device's record was last found, by index in ``tokens`` (`nil`: not
    /// read yet).
    private var current: [Located?]

    /// A round over `tokens`; with `absentIn`, every token is taken as not registered in that
    /// layout without being read (a bulk import of new devices), and a registered one is
    /// computed again from what the script answers.
    init(tokens: [DeviceToken], absentIn layout: RegistryLayout? = nil) {
        self.tokens = tokens
        self.outcomes = Array(repeating: nil, count: tokens.count)
        self.pending = Array(tokens.indices)
        self.current = Array(repeating: nil, count: tokens.count)
        if let layout {
            for index in tokens.indices {
                current[index] = Located(bytes: nil, shard: layout.home(of: tokens[index]), atPreviousHome: false)
            }
        }
    }

    /// The pending devices whose record must be read before the next ``writes(layout:_:)``.
    var unread: [Int] { pending.filter { current[$0] == nil } }

    /// Takes the records read for `indexes` (``unread``), in the same order.
    mutating func found(_ places: [Located], at indexes: [Int]) {
        for (index, place) in zip(indexes, places) {
            current[index] = place
        }
    }

    /// Forgets every record read: they belong to a layout found stale.
    mutating func forgetRecords() {
        current = Array(repeating: nil, count: tokens.count)
    }

    /// Applies `rule` to every pending device (each one read): a device it keeps has its outcome
    /// now, the others become patches to the shard their record is in (a new device to its
    /// home, never to a shard it would move out of), grouped by shard in shard order.
    ///
    /// - Throws: what `rule` throws; ``StoreError`` for a record that cannot be read.
    mutating func writes(layout: RegistryLayout, _ rule: (Int, DeviceToken, PackedDevice?) throws -> RecordChange) throws -> [Write] {
        var byShard: [Int: [Patch]] = [:]
        var patched: [Int] = []
        for index in pending {
            guard let place = current[index] else { preconditionFailure("a pending device computed before it was read") }
            let old = try place.bytes.map(DeviceRegistry.decode)
            let change = try rule(index, tokens[index], old)
            if case .keep = change {
                outcomes[index] = RecordUpdate(old: old, new: old, changed: false)
                continue
            }
            let toHome = old == nil
            byShard[toHome ? layout.home(of: tokens[index]) : place.shard, default: []].append(
                Patch(
                    index: index, token: tokens[index], expected: place.bytes, change: change, old: old,
                    atPreviousHome: toHome ? false : place.atPreviousHome))
            patched.append(index)
        }
        pending = patched
        forgetRecords()
        var writes: [Write] = []
        for (shard, patches) in byShard.sorted(by: { $0.key < $1.key }) {
            writes += patches.batches(of: DeviceRegistry.patchesPerCall).map { Write(shard: shard, patches: $0) }
        }
        return writes
    }

    /// Takes the script's `replies` to `writes` (in order): applied patches have their outcome
    /// (with the id and generation the script handed out), the others stay pending, known again
    /// when the script answered what the record is now.
    ///
    /// - Throws: ``StoreError`` for a reply that is not the script's (see
    ///   ``DeviceRegistry/patchResults(_:patches:)``).
    mutating func absorb(_ replies: [RedisReply], to writes: [Write]) throws -> Next {
        precondition(replies.count == writes.count, "one reply per write")
        pending = []
        var stale = false
        var fenced = false
        for (write, reply) in zip(writes, replies) {
            switch try DeviceRegistry.patchResults(reply, patches: write.patches) {
            case .staleLayout:
                stale = true
                pending += write.patches.map(\.index)
            case .results(let results):
                for (patch, result) in zip(write.patches, results) {
                    switch result {
                    case .applied(let id, let generation):
                        outcomes[patch.index] = RecordUpdate(
                            old: patch.old, new: Self.written(patch.change, id: id, generation: generation), changed: true)
                    case .changed(let bytes):
                        pending.append(patch.index)
                        if let bytes {
                            // Still where the patch went, changed: compute again from what it is now.
                            current[patch.index] = Located(bytes: bytes, shard: write.shard, atPreviousHome: patch.atPreviousHome)
                        }
                    case .fenced:
                        fenced = true
                        pending.append(patch.index)
                    case .moved:
                        pending.append(patch.index)
                    }
                }
            }
        }
        if pending.isEmpty { return .done }
        if stale {
            forgetRecords()
            return .staleLayout
        }
        return fenced ? .fenced : .again
    }

    /// Every device's outcome, in the order of ``tokens``, once ``absorb(_:to:)`` said `done`.
    var results: [RecordUpdate] {
        precondition(pending.isEmpty, "results asked for before the last round")
        return outcomes.map { $0! }
    }

    /// The record an applied `change` wrote: with the id and the generation the script handed
    /// out, when it handed them out.
    private static func written(_ change: RecordChange, id: UInt32, generation: UInt32) -> PackedDevice? {
        guard case .write(var record, let newDevice, let newBinding) = change else { return nil }
        if newDevice { record.id = id }
        if newBinding { record.generation = generation }
        return record
    }
}
