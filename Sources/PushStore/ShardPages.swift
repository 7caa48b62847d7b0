import APNsCore
import PushCore

/// The pages of one shard task, from the first bucket to the last: the one walk over a shard
/// that the expand stage and the CLI share. Memory is one page; each page is one
/// ``DeviceRegistry/scanShard(app:task:environment:filter:cursor:count:)`` call.
///
/// The iterator is a value that advances only when a page was read: a caller may retry a
/// failed ``AsyncIterator/next()`` and loses nothing.
package struct ShardPages: AsyncSequence, Sendable {
    package typealias Element = ShardScanPage

    let registry: DeviceRegistry
    let app: String
    let task: ShardTask
    let environment: APNsEnvironment
    let filter: ScanFilter
    /// An area job's circle: the task is then an area task (``DeviceRegistry/scanArea(app:task:environment:filter:area:cursor:count:)``).
    let area: GeoArea?
    let pageSize: Int

    package struct AsyncIterator: AsyncIteratorProtocol, Sendable {
        let pages: ShardPages
        /// Where the next page starts.
        package private(set) var cursor: UInt64 = 0
        /// Whether the last page was read.
        package private(set) var isComplete = false

        package mutating func next() async throws -> ShardScanPage? {
            guard !isComplete else { return nil }
            let page =
                if let area = pages.area {
                    try await pages.registry.scanArea(
                        app: pages.app, task: pages.task, environment: pages.environment, filter: pages.filter, area: area, cursor: cursor,
                        count: pages.pageSize)
                } else {
                    try await pages.registry.scanShard(
                        app: pages.app, task: pages.task, environment: pages.environment, filter: pages.filter, cursor: cursor,
                        count: pages.pageSize)
                }
            cursor = page.cursor
            isComplete = page.isComplete
            return page
        }
    }

    package func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(pages: self)
    }
}

extension DeviceRegistry {
    /// The pages of shard task `task` (``ShardPages``), about `pageSize` devices each; with an
    /// `area`, of area task `task`.
    package func pages(
        app: String, task: ShardTask, environment: APNsEnvironment, filter: ScanFilter = .devices, area: GeoArea? = nil, pageSize: Int
    ) -> ShardPages {
        ShardPages(registry: self, app: app, task: task, environment: environment, filter: filter, area: area, pageSize: pageSize)
    }
}
