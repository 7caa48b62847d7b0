import Testing

@testable import PushFleetBenchmarks

/// How the WAN benchmark compares round trips: each run against the run at 0 ms of its own round,
/// and the median over rounds, so that one round the machine slowed or sped up does not decide.
@Suite struct WANReportTests {
    /// A run of `seconds` whose acceptances grow at `rate` from the start (samples every 250 ms).
    private func run(_ roundTrip: Int, round: Int, rate: Double, payloadBytes: Int = 256) -> WANRun {
        let seconds = 4.0
        let samples = stride(from: 0.25, through: seconds, by: 0.25).map {
            WANRun.Sample(seconds: $0, accepted: Int(rate * $0), pool: WANRun.Pool())
        }
        return WANRun(
            roundTripMilliseconds: roundTrip, payloadBytes: payloadBytes, round: round, notifications: Int(rate * seconds), seconds: seconds,
            notificationsPerSecond: rate, workerCPUSecondsPer100k: 1, samples: samples)
    }

    @Test func eachRunIsComparedWithTheLoopbackRunOfItsRound() throws {
        let report = WANReport(
            devices: 1_000, registrationSeconds: 1, payloadBytes: 256,
            runs: [run(0, round: 1, rate: 50_000), run(80, round: 1, rate: 45_000), run(0, round: 2, rate: 70_000), run(80, round: 2, rate: 56_000)],
            kill: nil)
        let second = report.runs[3]
        #expect(try #require(report.ratio(of: second)) == 0.8)
        #expect(try #require(report.plateauRatio(of: second)) == 0.8)
        #expect(try #require(report.ratio(of: report.runs[1])) == 0.9)
    }

    @Test func theGateReadsTheMedianOverRoundsNotOneRound() throws {
        // Round 2's loopback run was fast (a quiet machine for a few seconds): alone it would read 74%.
        let rates: [(zero: Double, far: Double)] = [(50_000, 48_000), (72_000, 53_000), (49_000, 50_000), (52_000, 47_000), (48_000, 46_000)]
        let runs = rates.enumerated().flatMap { index, pair in
            [run(0, round: index + 1, rate: pair.zero), run(80, round: index + 1, rate: pair.far)]
        }
        let report = WANReport(devices: 1_000, registrationSeconds: 1, payloadBytes: 256, runs: runs, kill: nil)
        let ratios = rates.map { $0.far / $0.zero }.sorted()
        #expect(try #require(report.plateauRatio(roundTrip: 80, payloadBytes: 256)) == ratios[2])
        #expect(try #require(report.ratio(roundTrip: 80, payloadBytes: 256)) == ratios[2])
        #expect(report.runs(roundTrip: 80, payloadBytes: 256).count == 5)
        #expect(report.summary.contains("median of 5 round(s)"))
    }

    @Test func largePayloadsCompareWithTheFirstRoundsLoopbackRun() throws {
        let report = WANReport(
            devices: 1_000, registrationSeconds: 1, payloadBytes: 256,
            runs: [run(0, round: 1, rate: 50_000), run(200, round: 1, rate: 10_000, payloadBytes: 2_048), run(0, round: 2, rate: 20_000)],
            kill: nil)
        #expect(try #require(report.ratio(roundTrip: 200, payloadBytes: 2_048)) == 0.2)
        #expect(report.ratio(roundTrip: 80, payloadBytes: 256) == nil, "no run at 80 ms")
    }

    @Test func theMedianOfNothingIsNothing() {
        #expect(Statistics.median([]) == nil)
        #expect(Statistics.median([3, 1, 2]) == 2)
        #expect(Statistics.median([4, 1, 3, 2]) == 3, "the upper middle of an even count")
    }
}

/// Where a campaign's plateau starts and what rate it reads: the steady part after the ramp,
/// before the tail.
@Suite struct PlateauTests {
    /// Samples every 250 ms of a campaign whose rate in each quarter second is `rates`.
    private func samples(_ rates: [Double]) -> [(seconds: Double, accepted: Int)] {
        var accepted = 0.0
        return rates.enumerated().map { index, rate in
            accepted += rate / 4
            return (Double(index + 1) * 0.25, Int(accepted))
        }
    }

    @Test func aRampOfHandshakesIsNotPartOfThePlateau() throws {
        // Four quarter seconds of handshakes (nothing, then a trickle), then 100,000/s for 3 s, then
        // the tail; a fixed 10% window would have started in the ramp.
        let rates = [0, 2_000, 8_000, 40_000] + Array(repeating: 100_000.0, count: 12) + [30_000]
        let plateau = try #require(PipelineRun.plateau(of: samples(rates), campaignSeconds: 4.25))
        #expect(abs(plateau.rate - 100_000) < 1)
        #expect(plateau.reachedAfterSeconds == 1.25)
    }

    @Test func ratesThatAlternateReadAsTheirMean() throws {
        // Waves of chunks settling: 80,000 and 150,000/s in turn; the median of a few of them is a draw.
        let rates = [60_000.0] + (0..<12).map { $0.isMultiple(of: 2) ? 80_000 : 150_000 } + [10_000]
        let plateau = try #require(PipelineRun.plateau(of: samples(rates), campaignSeconds: 3.5))
        #expect(abs(plateau.rate - 115_000) < 1)
    }

    @Test func aCampaignWithoutASteadyPartHasNoPlateau() {
        #expect(PipelineRun.plateau(of: [], campaignSeconds: 1) == nil)
        #expect(PipelineRun.plateau(of: samples([0, 0, 0]), campaignSeconds: 0.75) == nil, "nothing accepted")
        #expect(PipelineRun.plateau(of: samples([0, 0, 50_000]), campaignSeconds: 0.75) == nil, "the ramp ends with the campaign")
    }
}
