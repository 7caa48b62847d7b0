import Redis
import Testing

@testable import PushStore

@Suite("Parked chunks")
struct ParkedChunksTests {
    func chunk(_ number: Int, tokens: Int = 3) -> ParkedChunks.Chunk {
        ParkedChunks.Chunk(key: Array("job/c\(number)".utf8), value: Array(#"{"chunk":\#(number)}"#.utf8), tokenCount: tokens)
    }

    @Test func listsComeDueAtTheirSlotAndHoldTheirChunksInOrder() async throws {
        let clock = ManualClock(1_000_000)
        try await withRedis { client async throws in
            let parked = ParkedChunks(client: client, lease: .seconds(60), clock: clock.function)
            let early = ParkedChunks.List(jobID: "job", task: "s0-q1900000-", slot: 1_900_000)
            let late = ParkedChunks.List(jobID: "job", task: "s1-q2800000-", slot: 2_800_000)
            try await parked.park([chunk(0), chunk(1)], in: early)
            try await parked.park([chunk(2)], in: early)
            try await parked.park([chunk(3, tokens: 70_000)], in: late)
            try await parked.park([], in: late)
            #expect(try await parked.count() == 2)
            #expect(try await parked.claimDue(limit: 10).isEmpty, "no slot has come")

            clock.advance(by: 900_000)  // 1,900,000: the early slot
            #expect(try await parked.claimDue(limit: 10) == [early])
            // Postponed (its job still expanding): due a second later, not at the lease's end.
            try await parked.postpone(early, by: .seconds(1))
            #expect(try await parked.claimDue(limit: 10).isEmpty)
            clock.advance(by: 1_000)
            #expect(try await parked.claimDue(limit: 10) == [early])
            #expect(try await parked.chunks(of: early, count: 2) == [chunk(0), chunk(1)])
            try await parked.drop(2, from: early)
            // Chunks are taken off the head; those parked after them stay.
            try await parked.park([chunk(4)], in: early)
            #expect(try await parked.chunks(of: early, count: 2) == [chunk(2), chunk(4)])
            #expect(try await parked.claimDue(limit: 10) == [early], "parked into: due at its slot again")
            // Claimed: another worker does not get it within the lease; after it, it does, with
            // the chunks not yet taken off.
            #expect(try await parked.claimDue(limit: 10).isEmpty)
            clock.advance(by: 60_000)
            #expect(try await parked.claimDue(limit: 10) == [early])
            #expect(try await parked.chunks(of: early, count: 64) == [chunk(2), chunk(4)])
            try await parked.drop(2, from: early)
            #expect(try await client.send("EXISTS", .string(early.key)).int == 0, "an empty list is gone")
            try await parked.release(early)

            clock.advance(by: 900_000)
            #expect(try await parked.claimDue(limit: 10) == [late])
            #expect(try await parked.chunks(of: late, count: 64) == [chunk(3, tokens: 70_000)])
            try await parked.drop(1, from: late)
            try await parked.release(late)
            #expect(try await parked.count() == 0)
        }
    }

    @Test func aChunkReadsBackAsItWasParked() {
        let chunk = ParkedChunks.Chunk(key: Array(repeating: 7, count: 300), value: [1, 2, 3], tokenCount: 1_000)
        #expect(ParkedChunks.Chunk(encoded: chunk.encoded) == chunk)
        #expect(ParkedChunks.Chunk(encoded: [0, 9, 0, 0, 0, 1, 1]) == nil, "a key longer than the element")
        #expect(
            ParkedChunks.List(entry: ParkedChunks.List(jobID: "a b", task: "t", slot: 5).entry) == ParkedChunks.List(jobID: "a b", task: "t", slot: 5)
        )
        #expect(ParkedChunks.List(entry: "a\nb") == nil)
    }
}
