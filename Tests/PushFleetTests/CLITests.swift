import APNsCore
import APNsSimulator
import EmbeddedStack
import Foundation
import PipelineTestSupport
import PushCore
import PushJobs
import PushStore
import Testing

/// The `pushfleet` client commands as operators run them: separate processes on the stack's
/// configuration file.
@Suite("pushfleet client commands", .serialized)
struct CLITests {
    static let app = EmbeddedStack.app

    @Test("devices import streams 200,000 devices from a CSV file")
    func importsTwoHundredThousandDevices() async throws {
        try await PipelineStack.with { stack in
            let count = 200_000
            let file = stack.stack.directory.appendingPathComponent("devices.csv")
            var text = "token,environment,openid,tags,time-zone\n"
            text.reserveCapacity(count * 90)
            for index in 0..<count {
                let openID = index.isMultiple(of: 10) ? "user-\(index)" : ""
                let tags = index.isMultiple(of: 3) ? "sports|news" : ""
                // Every 7th line names a time zone; the others leave the column out or empty.
                let zone = index.isMultiple(of: 7) ? ",Europe/Berlin" : index.isMultiple(of: 2) ? "," : ""
                text += "\(PipelineStack.token(index).hex),sandbox,\(openID),\(tags)\(zone)\n"
            }
            try text.write(to: file, atomically: true, encoding: .utf8)

            let run = try await CLIProcess.run(["devices", "import", "--app", Self.app, "--config", stack.configurationPath, "--json", file.path])
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.standardOutput.contains(#""imported":200000"#), "\(run.standardOutput)")
            #expect(run.standardOutput.contains(#""rejected":0"#))
            #expect(try await stack.registry.deviceCount(app: Self.app).sandbox == count)
            let device = try #require(try await stack.registry.device(app: Self.app, token: PipelineStack.token(30)))
            #expect(device.openID == "user-30")
            #expect(Set(device.tags) == ["sports", "news"])
            #expect(try await stack.registry.appTags(app: Self.app)["sports"] == (count + 2) / 3)
            #expect(try await stack.registry.deviceTime(app: Self.app, token: PipelineStack.token(70)).timeZone == "Europe/Berlin")
            #expect(try await stack.registry.deviceTime(app: Self.app, token: PipelineStack.token(71)).timeZone == nil)

            // devices bind --time-zone: checked before anything is written, shown once bound.
            let target = ["--app", Self.app, "--config", stack.configurationPath, "--environment", "sandbox"]
            let bad = try await CLIProcess.run(["devices", "bind", PipelineStack.token(71).hex, "--time-zone", "UTC+2"] + target)
            #expect(bad.status == 64 && bad.standardError.contains("is not a time zone of the IANA database"), "\(bad.standardError)")
            let bound = try await CLIProcess.run(["devices", "bind", PipelineStack.token(71).hex, "--time-zone", "Asia/Tokyo", "--json"] + target)
            #expect(bound.status == 0, "\(bound.standardError)")
            #expect(bound.standardOutput.contains(#""time-zone":"Asia/Tokyo""#), "\(bound.standardOutput)")
        }
    }

    @Test("devices import reports bad lines by number and imports the rest")
    func importReportsBadLines() async throws {
        try await PipelineStack.with { stack in
            let file = stack.stack.directory.appendingPathComponent("devices.jsonl")
            let lines = [
                #"{"token":"\#(PipelineStack.token(1).hex)","environment":"sandbox","tags":["a"]}"#,
                #"{"token":"xyz","environment":"sandbox"}"#,
                #"{"token":"\#(PipelineStack.token(2).hex)","environment":"staging"}"#,
                #"{"token":"\#(PipelineStack.token(3).hex)","environment":"sandbox","tags":["bad\u0001tag"]}"#,
                #"not json"#,
                #"{"token":"\#(PipelineStack.token(4).hex)","environment":"sandbox","openid":"u"}"#,
                #"{"token":"\#(PipelineStack.token(5).hex)","environment":"sandbox","time-zone":"Moon/Base"}"#,
                #"{"token":"\#(PipelineStack.token(6).hex)","environment":"sandbox","time-zone":"Pacific/Auckland"}"#,
            ]
            try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            let run = try await CLIProcess.run(["devices", "import", "--app", Self.app, "--config", stack.configurationPath, file.path])
            #expect(run.status == 1)
            for line in [2, 3, 5, 7] {
                #expect(run.standardError.contains("line \(line):"), "\(run.standardError)")
            }
            #expect(run.standardError.contains("line 7: time-zone: 'Moon/Base' is not a time zone"), "\(run.standardError)")
            #expect(run.standardError.contains(PipelineStack.token(3).hex), "the refused tag names its device")
            #expect(run.standardOutput.contains("imported 3 devices"), "\(run.standardOutput)")
            #expect(run.standardOutput.contains("5 line(s) rejected"))
            #expect(try await stack.registry.deviceCount(app: Self.app).sandbox == 3)
            #expect(try await stack.registry.deviceTime(app: Self.app, token: PipelineStack.token(6)).timeZone == "Pacific/Auckland")
        }
    }

    @Test("devices import reads CSV fields trimmed, in any case of header and hex, and reports each bad line")
    func importReadsCSVLines() async throws {
        try await PipelineStack.with { stack in
            let file = stack.stack.directory.appendingPathComponent("devices.csv")
            let token = (0..<8).map { PipelineStack.token($0).hex }
            let lines = [
                "TOKEN,Environment,OpenID,Tags,Time-Zone",  // the header, in any case
                "  \(token[0].uppercased()) , sandbox , user-0 , a|b||c , Asia/Tokyo  ",
                "\(token[1]),sandbox",
                "# a comment",
                "",
                "\(token[2]),staging",
                "\(token[3]),sandbox,,,,",
                "\(token[4]),,",
                "xyz,sandbox",
                "\(token[5]),production,,news,Moon/Base",
                "\(token[6]),production,,news\r",
            ]
            try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
            let run = try await CLIProcess.run(["devices", "import", "--app", Self.app, "--config", stack.configurationPath, file.path])
            #expect(run.status == 1)
            #expect(run.standardError.contains("line 6: environment: must be sandbox or production"), "\(run.standardError)")
            #expect(run.standardError.contains("line 7: expected token,environment,openid,tags,time-zone"), "\(run.standardError)")
            #expect(run.standardError.contains("line 8: environment: missing"), "\(run.standardError)")
            #expect(run.standardError.contains("line 9: token:"), "\(run.standardError)")
            #expect(run.standardError.contains("line 10: time-zone: 'Moon/Base' is not a time zone"), "\(run.standardError)")
            #expect(run.standardOutput.contains("imported 3 devices"), "\(run.standardOutput)")
            #expect(run.standardOutput.contains("5 line(s) rejected"))
            let first = try #require(try await stack.registry.device(app: Self.app, token: PipelineStack.token(0)))
            #expect(first.environment == .sandbox && first.openID == "user-0")
            #expect(first.tags == ["a", "b", "c"])
            #expect(try await stack.registry.deviceTime(app: Self.app, token: PipelineStack.token(0)).timeZone == "Asia/Tokyo")
            #expect(try await stack.registry.device(app: Self.app, token: PipelineStack.token(1))?.tags == [])
            #expect(try await stack.registry.device(app: Self.app, token: PipelineStack.token(6))?.tags == ["news"])
            #expect(try await stack.registry.device(app: Self.app, token: PipelineStack.token(2)) == nil)
        }
    }

    @Test("devices export writes every device, import reads it back; users show and logout; devices remove-tag")
    func exportUsersAndRemoveTag() async throws {
        try await PipelineStack.with { stack in
            let tokens = (0..<300).map(PipelineStack.token)
            for (index, token) in tokens.enumerated() {
                try await stack.registry.bind(
                    app: Self.app, token: token, environment: index.isMultiple(of: 2) ? .sandbox : .production,
                    openID: index.isMultiple(of: 10) ? "user-\(index)" : nil, tags: index.isMultiple(of: 3) ? ["sale", "news"] : ["news"],
                    registeredAt: Int64(1_000 + index), timeZone: index.isMultiple(of: 7) ? "Africa/Lagos" : nil)
            }
            let config = ["--app", Self.app, "--config", stack.configurationPath]
            let file = stack.stack.directory.appendingPathComponent("export.jsonl")
            try "an earlier export\n".write(to: file, atomically: true, encoding: .utf8)  // replaced whole
            let export = try await CLIProcess.run(["devices", "export"] + config + ["--output", file.path])
            #expect(export.status == 0, "\(export.standardError)")
            #expect(export.standardError.contains("exported 300 devices"), "\(export.standardError)")
            #expect(!FileManager.default.fileExists(atPath: file.path + ".partial"))
            let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
            #expect(lines.count == tokens.count)

            let other = EmbeddedStack.otherApp
            let imported = try await CLIProcess.run(["devices", "import", "--app", other, "--config", stack.configurationPath, file.path])
            #expect(imported.status == 0, "\(imported.standardError)")
            for index in [0, 7, 10, 299] {
                let original = try await stack.registry.device(app: Self.app, token: tokens[index])
                #expect(try await stack.registry.device(app: other, token: tokens[index]) == original, "device \(index)")
                // Time zones go with the export and come back with the import.
                let zone = try await stack.registry.deviceTime(app: other, token: tokens[index]).timeZone
                #expect(zone == (index.isMultiple(of: 7) ? "Africa/Lagos" : nil), "device \(index)")
            }
            #expect(lines.filter { $0.contains(#""time-zone":"Africa/Lagos""#) }.count == 43)

            let shown = try await CLIProcess.run(["users", "show", "user-10", "--json"] + config)
            #expect(shown.status == 0, "\(shown.standardError)")
            #expect(shown.standardOutput.contains(tokens[10].hex))
            let loggedOut = try await CLIProcess.run(["users", "logout", "user-10"] + config)
            #expect(loggedOut.status == 0, "\(loggedOut.standardError)")
            #expect(try await stack.registry.device(app: Self.app, token: tokens[10])?.openID == nil)
            #expect(try await CLIProcess.run(["users", "logout", "user-10"] + config).status == 2)
            #expect(try await CLIProcess.run(["users", "show", "user-10"] + config).status == 2)

            let removed = try await CLIProcess.run(["devices", "remove-tag", "sale", "--json"] + config)
            #expect(removed.status == 0, "\(removed.standardError)")
            #expect(removed.standardOutput.contains(#""devices":100"#), "\(removed.standardOutput)")
            #expect(try await stack.registry.appTags(app: Self.app) == ["news": 300])
            #expect(try await stack.registry.appTags(app: other)["sale"] == 100, "the other app keeps its tag")
        }
    }

    @Test("devices suspects lists the devices kept aside, page after page, up to --limit; restore --all returns them")
    func suspectsAndRestoreAll() async throws {
        try await PipelineStack.with { stack in
            let tokens = (0..<1_300).map(PipelineStack.token)
            try await stack.registry.bind(tokens.map { DeviceRegistration(token: $0, environment: .sandbox, registeredAt: 1_000) }, app: Self.app)
            #expect(try await stack.registry.deviceCount(app: Self.app).sandbox == tokens.count)
            // Every third device is suspect: 434, more than one scan page of 500 in some shards' tasks.
            let suspects = stride(from: 0, to: tokens.count, by: 3).map { tokens[$0] }
            for token in suspects {
                #expect(try await stack.registry.markSuspect(app: Self.app, token: token, environment: .sandbox, reason: "BadDeviceToken", at: 2_000))
            }
            let config = ["--app", Self.app, "--config", stack.configurationPath]
            let listed = try await CLIProcess.run(["devices", "suspects", "--json", "--limit", "5000"] + config)
            #expect(listed.status == 0, "\(listed.standardError)")
            let lines = listed.standardOutput.split(separator: "\n").filter { $0.hasPrefix("{") }
            #expect(Set(lines.compactMap { line in suspects.first { line.contains($0.hex) } }) == Set(suspects))
            #expect(lines.count == suspects.count, "each suspect once")
            #expect(lines.allSatisfy { $0.contains(#""reason":"BadDeviceToken""#) && $0.contains(#""since":2000"#) })
            let limited = try await CLIProcess.run(["devices", "suspects", "--limit", "7"] + config)
            #expect(limited.standardOutput.split(separator: "\n").count { $0.contains("BadDeviceToken") } == 7)
            let production = try await CLIProcess.run(["devices", "suspects", "--environment", "production"] + config)
            #expect(!production.standardOutput.contains("BadDeviceToken"), "the suspects are sandbox devices")

            let restored = try await CLIProcess.run(["devices", "restore", "--all", "--json"] + config)
            #expect(restored.status == 0, "\(restored.standardError)")
            #expect(restored.standardOutput.contains(#""restored":\#(suspects.count)"#), "\(restored.standardOutput)")
            #expect(try await stack.registry.deviceCount(app: Self.app) == DeviceCount(sandbox: tokens.count, production: 0))
        }
    }

    @Test("credentials check: a certificate per environment is accepted and its expiry shown; a refused key fails")
    func credentialsCheck() async throws {
        var options = PipelineStack.Options()
        options.certificates = [.sandbox: .seconds(10 * 86_400 + 3_600), .production: .seconds(365 * 86_400)]
        try await PipelineStack.with(options, productionSimulator: { _ in }) { stack in
            let run = try await CLIProcess.run(["credentials", "check", "--app", Self.app, "--config", stack.configurationPath, "--json"])
            #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
            let report = try #require(try JSONValue(parsing: Data(run.standardOutput.utf8)).objectValue)
            #expect(report["passed"] == true)
            let listed = report["environments"]?.arrayValue ?? []
            let environments = listed.compactMap(\.objectValue)
            try #require(environments.count == 2)
            #expect(environments.map { $0["environment"] } == ["sandbox", "production"])
            #expect(environments.map { $0["verdict"] } == ["accepted", "accepted"])
            #expect(environments.map { $0["credential"] } == ["certificate/news/sandbox", "certificate/news/production"])
            #expect(environments[0]["certificate"]?.objectValue?["state"] == "expiring")
            // Valid for 365 days from its issue, at a second's precision.
            #expect((364...365).contains(environments[1]["certificate"]?.objectValue?["days-left"]?.intValue ?? 0))
            #expect(!run.standardOutput.contains("PRIVATE KEY"))
            // Each simulator saw the probe with the certificate of its own environment.
            #expect(try await stack.simulator.counters().accepted == 1)
            #expect(try await #require(stack.stack.productionSimulator).counters().accepted == 1)

            let text = try await CLIProcess.run([
                "credentials", "check", "--app", Self.app, "--config", stack.configurationPath, "--environment", "sandbox",
            ])
            #expect(text.status == 0)
            #expect(text.standardOutput.contains("10 days left, expiring"), "\(text.standardOutput)")
            #expect(text.standardOutput.contains("accepted: APNs answered 200 accepted to the probe"))
        }
        var untrusted = PipelineStack.Options()
        untrusted.simulatorTrustsKey = false
        try await PipelineStack.with(untrusted) { stack in
            let run = try await CLIProcess.run(["credentials", "check", "--app", Self.app, "--config", stack.configurationPath])
            #expect(run.status == 1)
            #expect(run.standardOutput.contains("credential refused: APNs answered 403 InvalidProviderToken"), "\(run.standardOutput)")
            let usage = try await CLIProcess.run([
                "credentials", "check", "--app", Self.app, "--config", stack.configurationPath, "--environment", "production",
            ])
            #expect(usage.status == 64)
            #expect(usage.standardError.contains("does not send to production"), "\(usage.standardError)")
        }
    }

    @Test("registry reshard raises the shard count; registry layout shows it; bad counts are refused")
    func registryReshard() async throws {
        try await PipelineStack.with { stack in
            let tokens = (0..<5_000).map(PipelineStack.token)
            try await stack.register(tokens)
            let shards = try await stack.registry.layout(app: Self.app).shards
            let config = ["--app", Self.app, "--config", stack.configurationPath]

            let refused = try await CLIProcess.run(["registry", "reshard"] + config + ["--shards", String(shards + 1)])
            #expect(refused.status == 1)
            #expect(refused.standardError.contains("shards"), "\(refused.standardError)")

            let run = try await CLIProcess.run(["registry", "reshard"] + config + ["--shards", String(shards * 2), "--json"])
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.standardOutput.contains(#""shards":\#(shards * 2)"#), "\(run.standardOutput)")
            #expect(run.standardOutput.contains(#""from":\#(shards)"#))
            let layout = try await CLIProcess.run(["registry", "layout"] + config)
            #expect(layout.status == 0)
            #expect(layout.standardOutput.contains("\(shards * 2) shards (epoch 1)"), "\(layout.standardOutput)")
            #expect(layout.standardOutput.contains("5,000 devices"), "\(layout.standardOutput)")
            #expect(try await stack.registry.refreshLayout(app: Self.app).shards == shards * 2)
            for token in tokens.prefix(200) {
                #expect(try await stack.registry.device(app: Self.app, token: token) != nil)
            }
        }
    }

    @Test("campaign --follow ends with the campaign's totals")
    func campaignFollowShowsTheTotals() async throws {
        let tokens = (0..<1_000).map(PipelineStack.token)
        let uninstalled = stride(from: 0, to: tokens.count, by: 100).map { tokens[$0] }
        try await PipelineStack.with(simulator: { simulator in
            simulator.devices.unregistered = Dictionary(uniqueKeysWithValues: uninstalled.map { ($0.hex, 1) })
        }) { stack in
            try await stack.register(tokens, tags: ["all"])
            try await stack.withWorker { _ in
                let run = try await CLIProcess.run([
                    "campaign", "--config", stack.configurationPath, "--app", Self.app, "--broadcast",
                    "--title", "Hello", "--body", "from the CLI", "--follow", "--timeout", "120",
                ])
                #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
                let summary = run.standardOutput.split(separator: "\n").suffix(14).joined(separator: "\n")
                #expect(summary.contains("state          complete"), "\(run.standardOutput)")
                #expect(summary.contains("targeted       1000"))
                #expect(summary.contains("accepted       990"))
                #expect(summary.contains("failed         10 (unregistered 10, removed "))
                #expect(try await stack.simulator.counters().accepted == 990)

                let one = try await CLIProcess.run([
                    "send", "--config", stack.configurationPath, "--app", Self.app, "--token", tokens[1].hex,
                    "--title", "Just you", "--follow", "--json",
                ])
                #expect(one.status == 0, "\(one.standardError)")
                let status = try JSONValue(parsing: Data(one.standardOutput.utf8)).objectValue
                #expect(status?["accepted"]?.intValue == 1)
                #expect(status?["state"]?.stringValue == "complete")

                // Both campaigns' notifications that reached APNs (990 + 10 refused + 1), in the hours they were sent.
                let hours = try await CLIProcess.run(["stats", "hours", "--config", stack.configurationPath, "--app", Self.app, "--json"])
                #expect(hours.status == 0, "\(hours.standardError)")
                let cells = try JSONValue(parsing: Data(hours.standardOutput.utf8)).objectValue?["hours"]?.arrayValue ?? []
                #expect(cells.count == 168)
                #expect(
                    cells.reduce(0) { $0 + ($1.objectValue?["sent"]?.intValue ?? 0) } == 1001, "sent as a job counts it: accepted or refused by APNs")
                let table = try await CLIProcess.run(["stats", "hours", "--config", stack.configurationPath, "--app", Self.app, "--days", "7"])
                #expect(table.status == 0, "\(table.standardError)")
                #expect(table.standardOutput.contains("sent 1001, delivered 0, opened 0"), "\(table.standardOutput)")
                #expect(table.standardOutput.contains("last 7 day(s), UTC"))
            }
        }
    }

    @Test("jobs recall withdraws a campaign from the devices that got it; a bad file, a second recall and an unknown job exit as documented")
    func jobsRecall() async throws {
        let tokens = (0..<100).map(PipelineStack.token)
        let uninstalled = Array(tokens.suffix(10))
        try await PipelineStack.with(simulator: { simulator in
            simulator.devices.unregistered = Dictionary(uniqueKeysWithValues: uninstalled.map { ($0.hex, 1) })
        }) { stack in
            try await stack.register(tokens)
            try await stack.withWorker { _ in
                let config = ["--config", stack.configurationPath]
                let sent = try await CLIProcess.run(
                    ["campaign"] + config + ["--app", Self.app, "--broadcast", "--title", "Hello", "--follow", "--timeout", "120", "--json"])
                #expect(sent.status == 0, "\(sent.standardError)")
                let campaign = try #require(try JSONValue(parsing: Data(sent.standardOutput.utf8)).objectValue?["job"]?.stringValue)

                let directory = FileManager.default.temporaryDirectory.appendingPathComponent("recall-\(UUID().uuidString)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                defer { try? FileManager.default.removeItem(at: directory) }
                let own = directory.appendingPathComponent("own-collapse.json")
                try Data(#"{"notification": {"aps": {"alert": "x"}}, "headers": {"push-type": "alert", "collapse-id": "mine"}}"#.utf8).write(to: own)
                let badFile = try await CLIProcess.run(["jobs", "recall"] + config + [campaign, "--overwrite-with", own.path])
                #expect(badFile.status == 65 && badFile.standardError.contains("overwrite-with.headers.collapse-id"), "\(badFile.standardError)")
                let missing = try await CLIProcess.run(
                    ["jobs", "recall"] + config + [campaign, "--overwrite-with", directory.appendingPathComponent("none").path])
                #expect(missing.status == 65)

                let recall = try await CLIProcess.run(["jobs", "recall"] + config + [campaign])
                #expect(recall.status == 0, "\(recall.standardError)")
                #expect(recall.standardOutput.contains("recalled (withdraw) by job"), "\(recall.standardOutput)")
                let recallID = try #require(try await stack.jobs.recalledBy(jobID: campaign)?.jobID)
                let done = try await eventually("the withdraw to finish") {
                    try await stack.report(recallID)
                } until: {
                    $0.isComplete
                }
                #expect(done.accepted == tokens.count - uninstalled.count, "only the devices that accepted the campaign")

                let again = try await CLIProcess.run(["jobs", "recall"] + config + [campaign])
                #expect(again.status == 5 && again.standardError.contains("recalled already"), "\(again.standardError)")
                let stats = try await CLIProcess.run(["stats"] + config + [campaign])
                #expect(stats.standardOutput.contains("recalled by    job \(recallID) (withdraw)"), "\(stats.standardOutput)")
                let unknown = try await CLIProcess.run(["jobs", "recall"] + config + ["no-such-job"])
                #expect(unknown.status == 2)
            }
        }
    }

    @Test("campaign --badge-increment counts each device's badge; devices badge shows and sets it; bad input exits as documented")
    func badges() async throws {
        let tokens = (0..<20).map(PipelineStack.token)
        try await PipelineStack.with { stack in
            try await stack.register(tokens)
            let config = stack.configurationPath
            let set = try await CLIProcess.run(["devices", "badge", tokens[0].hex, "--config", config, "--app", Self.app, "--set", "4"])
            #expect(set.status == 0 && set.standardOutput == "4\n", "\(set.standardOutput)\(set.standardError)")
            try await stack.withWorker { _ in
                let run = try await CLIProcess.run([
                    "campaign", "--config", config, "--app", Self.app, "--broadcast", "--title", "News", "--badge-increment", "2",
                    "--follow", "--timeout", "120",
                ])
                #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
            }
            let first = try await CLIProcess.run(["devices", "badge", tokens[0].hex, "--config", config, "--app", Self.app, "--json"])
            #expect(try JSONValue(parsing: Data(first.standardOutput.utf8)) == ["token": .string(tokens[0].hex), "badge": 6])
            let other = try await CLIProcess.run(["devices", "badge", tokens[7].hex, "--config", config, "--app", Self.app])
            #expect(other.status == 0 && other.standardOutput == "2\n", "\(other.standardOutput)")

            let unknown = try await CLIProcess.run(["devices", "badge", PipelineStack.token(99).hex, "--config", config, "--app", Self.app])
            #expect(unknown.status == 2 && unknown.standardError.contains("is not registered"), "\(unknown.standardError)")
            let tooLarge = try await CLIProcess.run(["devices", "badge", tokens[0].hex, "--config", config, "--app", Self.app, "--set", "70000"])
            #expect(tooLarge.status == 64 && tooLarge.standardError.contains("--set must be 0 to 65535"), "\(tooLarge.standardError)")
            let both = try await CLIProcess.run([
                "campaign", "--config", config, "--app", Self.app, "--broadcast", "--title", "x", "--badge", "1", "--badge-increment", "1",
            ])
            #expect(both.status == 64 && both.standardError.contains("exclusive"), "\(both.standardError)")
        }
    }

    @Test("devices location records, shows and forgets; campaign --area reaches the devices located in the circle; bad input exits 64")
    func areas() async throws {
        let tokens = (0..<12).map(PipelineStack.token)
        try await PipelineStack.with(simulator: { $0.recordsRequests = true }) { stack in
            try await stack.register(tokens)
            let config = stack.configurationPath
            func location(_ arguments: [String]) async throws -> CLIProcess.Run {
                try await CLIProcess.run(["devices", "location"] + arguments + ["--config", config, "--app", Self.app])
            }
            // 0..<6 in Paris, 6..<12 in London.
            for (index, token) in tokens.enumerated() {
                let (lat, lon) = index < 6 ? ("48.8566", "2.3522") : ("51.5074", "-0.1278")
                let set = try await location([token.hex, "--lat", lat, "--lon", lon, "--json"])
                #expect(set.status == 0, "\(set.standardOutput)\(set.standardError)")
                let stored = try JSONValue(parsing: Data(set.standardOutput.utf8)).objectValue
                #expect(abs((stored?["lat"]?.numberValue?.doubleValue ?? 0) - Double(lat)!) < 0.01)
            }
            let shown = try await location([tokens[0].hex])
            #expect(shown.status == 0 && shown.standardOutput.hasPrefix("48.8"), "\(shown.standardOutput)\(shown.standardError)")
            let forget = try await location([tokens[5].hex, "--forget"])
            #expect(forget.status == 0 && forget.standardOutput == "forgotten\n", "\(forget.standardOutput)")
            let none = try await location([tokens[5].hex])
            #expect(none.status == 2 && none.standardError.contains("has no location"), "\(none.standardError)")

            try await stack.withWorker { _ in
                let run = try await CLIProcess.run([
                    "campaign", "--config", config, "--app", Self.app, "--area", "48.8566,2.3522,25", "--title", "Storm", "--follow", "--timeout",
                    "120",
                ])
                #expect(run.status == 0, "\(run.standardOutput)\n\(run.standardError)")
                _ = try await stack.requestsAfterMarkerJob()
            }
            let markers = Set((0..<10).map { PipelineStack.markerToken($0).hex })
            let reached = try await stack.simulator.requestRecords().filter { $0.status == 200 }.compactMap(\.deviceToken).filter {
                !markers.contains($0)
            }
            #expect(reached.sorted() == tokens.prefix(5).map(\.hex).sorted(), "each located device in the circle once")

            let unknown = try await location([PipelineStack.token(99).hex, "--lat", "1", "--lon", "1"])
            #expect(unknown.status == 2 && unknown.standardError.contains("is not registered"), "\(unknown.standardError)")
            let high = try await location([tokens[0].hex, "--lat", "86", "--lon", "1"])
            #expect(high.status == 64 && high.standardError.contains("--lat must be a latitude"), "\(high.standardError)")
            let half = try await location([tokens[0].hex, "--lat", "1"])
            #expect(half.status == 64 && half.standardError.contains("go together"), "\(half.standardError)")
            let badArea = try await CLIProcess.run(["campaign", "--config", config, "--app", Self.app, "--area", "48,2", "--title", "x"])
            #expect(badArea.status == 64 && badArea.standardError.contains("--area must be LAT,LON,KM"), "\(badArea.standardError)")
            let outside = try await CLIProcess.run(["campaign", "--config", config, "--app", Self.app, "--area", "95,2,10", "--title", "x"])
            #expect(outside.status == 64 && outside.standardError.contains("audience.area.lat"), "\(outside.standardError)")
        }
    }

    @Test("campaign --local-time parks the campaign for each device's time; --best-hour-within too; bad or both exit 64")
    func deviceTimes() async throws {
        let tokens = (0..<30).map(PipelineStack.token)
        try await PipelineStack.with { stack in
            try await stack.register(tokens)
            let base = ["campaign", "--config", stack.configurationPath, "--app", Self.app, "--broadcast", "--title", "Morning"]
            let bad = try await CLIProcess.run(base + ["--local-time", "25:00"])
            #expect(bad.status == 64 && bad.standardError.contains("send-at.local-time"), "\(bad.standardError)")
            let badWindow = try await CLIProcess.run(base + ["--best-hour-within", "2d"])
            #expect(badWindow.status == 64 && badWindow.standardError.contains("send-at.best-hour.within"), "\(badWindow.standardError)")
            let both = try await CLIProcess.run(base + ["--local-time", "08:00", "--best-hour-within", "24h"])
            #expect(both.status == 64 && both.standardError.contains("exclusive"), "\(both.standardError)")

            try await stack.withWorker { _ in
                // Two hours from now in UTC, the app's zone: every device waits.
                var utc = Calendar(identifier: .gregorian)
                utc.timeZone = TimeZone(identifier: "UTC")!
                let hour = utc.component(.hour, from: Date().addingTimeInterval(7_200))
                let run = try await CLIProcess.run(base + ["--local-time", String(format: "%02d:00", hour), "--json"])
                #expect(run.status == 0, "\(run.standardError)")
                let jobID = try #require(try JSONValue(parsing: Data(run.standardOutput.utf8)).objectValue?["job"]?.stringValue)
                let report = try await eventually("the campaign parked for one slot") {
                    try await stack.report(jobID)
                } until: {
                    $0.expanded == tokens.count && $0.sendTimes.count == 1
                }
                #expect(report.sendTimes[0].scheduled == tokens.count && report.accepted == 0)
                let stats = try await CLIProcess.run(["stats", jobID, "--config", stack.configurationPath])
                #expect(stats.standardOutput.contains("waiting for"), "\(stats.standardOutput)")
            }
        }
    }

    @Test("jobs cancel and usage errors have meaningful exit codes")
    func exitCodes() async throws {
        try await PipelineStack.with { stack in
            let unknown = try await CLIProcess.run(["jobs", "cancel", "--config", stack.configurationPath, "no-such-job"])
            #expect(unknown.status == 2)
            #expect(unknown.standardError.contains("no job 'no-such-job'"))
            let noAudience = try await CLIProcess.run(["campaign", "--config", stack.configurationPath, "--app", Self.app, "--title", "x"])
            #expect(noAudience.status == 64)
            #expect(noAudience.standardError.contains("exactly one audience"))
            let badApp = try await CLIProcess.run(["send", "--config", stack.configurationPath, "--app", "nope", "--token", "abcd", "--title", "x"])
            #expect(badApp.status == 64)
            #expect(badApp.standardError.contains("unknown app 'nope'"))
            let unbound = try await CLIProcess.run([
                "devices", "unbind", "--config", stack.configurationPath, "--app", Self.app, PipelineStack.token(9).hex,
            ])
            #expect(unbound.status == 2)
            for command in ["pause", "resume", "abort"] {
                let run = try await CLIProcess.run(["jobs", command, "--config", stack.configurationPath, "no-such-job"])
                #expect(run.status == 2, "jobs \(command) of an unknown job")
            }
            let badRate = try await CLIProcess.run(["jobs", "rate", "--config", stack.configurationPath, "some-job", "0"])
            #expect(badRate.status == 64)
            #expect(badRate.standardError.contains("above 0"))
            let notSuspect = try await CLIProcess.run(["devices", "restore", "--config", stack.configurationPath, "--app", Self.app])
            #expect(notSuspect.status == 64, "name tokens or --all")
            let noStats = try await CLIProcess.run(["stats", "--config", stack.configurationPath, "no-such-job"])
            #expect(noStats.status == 2, "a job id still reads the job's statistics: \(noStats.standardError)")
            let badDays = try await CLIProcess.run(["stats", "hours", "--config", stack.configurationPath, "--app", Self.app, "--days", "91"])
            #expect(badDays.status == 64)
            #expect(badDays.standardError.contains("--days must be 1 to 90"))
            let unknownApp = try await CLIProcess.run(["stats", "hours", "--config", stack.configurationPath, "--app", "nope"])
            #expect(unknownApp.status == 64)
            #expect(unknownApp.standardError.contains("no app 'nope'"))
        }
    }
}
