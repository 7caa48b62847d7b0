import Foundation

/// A consumer's own view of its group, from librdkafka's statistics report (its `cgrp` object,
/// emitted every `statistics.interval.ms`): whether its member is taking part in a rebalance.
///
/// With cooperative rebalancing a member keeps its partitions through a rebalance, so the
/// partitions a fleet holds can add up while a member is still joining the new generation; only
/// the member itself knows it is. A report is as old as the statistics interval.
public struct KafkaGroupState: Sendable, Hashable {
    /// `cgrp.state`: the member's link to the group coordinator; `up` once it is found and
    /// connected.
    public var state: String
    /// `cgrp.join_state`: `steady` between rebalances; `wait-join`, `wait-sync`,
    /// `wait-assign-call`, `wait-unassign-call` and the like while one is under way.
    public var joinState: String

    public init(state: String, joinState: String) {
        self.state = state
        self.joinState = joinState
    }

    /// Whether the member is in its group and takes part in no rebalance.
    public var isSteady: Bool { state == "up" && joinState == "steady" }

    /// The group state of a statistics report; `nil` when the report has no `cgrp` object (a
    /// producer's, or a consumer without a group) or is not JSON.
    public init?(statistics: some Collection<UInt8>) {
        guard let report = try? JSONDecoder().decode(Report.self, from: Data(statistics)), let group = report.cgrp else {
            return nil
        }
        self.init(state: group.state, joinState: group.joinState)
    }

    private struct Report: Decodable {
        let cgrp: Group?
    }

    private struct Group: Decodable {
        let state: String
        let joinState: String

        enum CodingKeys: String, CodingKey {
            case state
            case joinState = "join_state"
        }
    }
}
