import PushStore
import Testing

@testable import PushJobs

@Suite("Job report completion")
struct JobReportTests {
    /// A broadcast of 400 devices in 4 shards, cancelled while its first chunks were out: each
    /// shard published 25 tokens before the cancel and counted its other 75 as cancelled.
    func cancelledBroadcast(accepted: Int, cancelledInDelivery: Int) -> JobReport {
        var counters = ["shards": 4, "expanded": 100, "chunks": 4, "accepted": accepted, "sent": accepted]
        for shard in 0..<4 {
            counters[JobCounter.shardTargeted(shard).name] = 100
            counters[JobCounter.shardCancelled(shard).name] = 75
            counters[JobCounter.shardDone(shard).name] = 1
        }
        if cancelledInDelivery > 0 {
            counters[JobCounter.cancelled.name] = cancelledInDelivery
        }
        return JobReport(jobID: "j", counters: counters)
    }

    @Test("a cancelled broadcast is not complete while published notifications have no outcome")
    func cancelledBroadcastWaitsForPublishedNotifications() {
        // 300 cancelled at the shards outnumber the 100 published: judged against `expanded`
        // alone, the report would say complete with 60 notifications still in flight.
        let inFlight = cancelledBroadcast(accepted: 40, cancelledInDelivery: 0)
        #expect(inFlight.expansionComplete)
        #expect(inFlight.cancelled == 300 && inFlight.cancelledUnexpanded == 300)
        #expect(!inFlight.isComplete)

        let settled = cancelledBroadcast(accepted: 40, cancelledInDelivery: 60)
        #expect(settled.cancelled == 360 && settled.cancelledUnexpanded == 300)
        #expect(settled.isComplete)
        #expect(settled.accepted + settled.cancelled == settled.targeted)
    }

    @Test("a list job cancelled part-way completes once its published tokens are settled")
    func cancelledListJob() {
        let counters = ["targeted": 10, "expanded": 4, "cancelled-before-expansion": 6, "expansion-complete": 1, "accepted": 3]
        #expect(!JobReport(jobID: "j", counters: counters).isComplete)
        #expect(JobReport(jobID: "j", counters: counters.merging(["cancelled": 1]) { $1 }).isComplete)
    }

    @Test("without a cancel, every expanded token needs its outcome")
    func ordinaryJob() {
        let counters = ["targeted": 10, "expanded": 10, "expansion-complete": 1, "accepted": 7, "failed:BadDeviceToken": 2]
        #expect(!JobReport(jobID: "j", counters: counters).isComplete)
        #expect(JobReport(jobID: "j", counters: counters.merging(["dead-lettered": 1]) { $1 }).isComplete)
        #expect(!JobReport(jobID: "j", counters: counters.merging(["expansion-complete": 0, "dead-lettered": 1]) { $1 }).isComplete)
    }

    @Test("an online-only job completes when each message is acknowledged or inboxed; reads from the inbox add nothing")
    func onlineOnlyJob() {
        let counters = ["targeted": 10, "expanded": 10, "expansion-complete": 1, "online-sent": 6, "online": 4, "inboxed": 5]
        let waiting = JobReport(jobID: "j", counters: counters.merging(["inbox-read": 3]) { $1 })
        #expect(waiting.inboxed == 5 && waiting.inboxRead == 3 && waiting.finished == 9)
        #expect(!waiting.isComplete)
        let done = JobReport(jobID: "j", counters: counters.merging(["inboxed": 6]) { $1 })
        #expect(done.isComplete && done.online + done.inboxed == done.targeted)
    }
}
