import APNsCore
import ArgumentParser
import Foundation
import PushConfiguration
import PushCore
import PushStore

/// `pushfleet devices …`: the device registry from the command line.
struct DevicesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "Import, export, bind, unbind and tag devices in the registry; list and restore suspect ones.",
        subcommands: [
            Import.self, Export.self, Bind.self, Unbind.self, Tags.self, Badge.self, Location.self, RemoveTag.self, Suspects.self, Restore.self,
        ])

    /// `pushfleet devices import FILE --app APP`
    struct Import: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Import devices from a CSV or JSON-lines file, streamed (millions of rows, constant memory).",
            discussion: """
                CSV: token,environment,openid,tags,time-zone (tags separated by '|'; the last columns may be \
                left out; a header line is optional). \
                JSON lines: {"token": …, "environment": …, "openid": …, "tags": […], "time-zone": …}. \
                Lines that are not valid are reported with their number and skipped. Batches are written \
                concurrently: a token listed twice in the file ends in the state of either line. \
                Exit status: 0 every line imported, 1 some lines rejected (the rest imported), 64 usage.
                """)

        @OptionGroup var options: ClientOptions

        @Option(help: "The app id.")
        var app: String
        @OptionGroup var kind: TokenKindOption

        @Option(help: "csv or jsonl (default: from the file's extension).")
        var format: String?

        @Option(help: "The environment of lines that name none (sandbox or production).")
        var environment: String?

        @Option(
            help: """
                Devices per batch. A batch is lined up shard by shard and written with one script call per shard \
                it touches, so an app of many shards wants large batches (100,000 over 1,024 shards: about 100 \
                devices per call).
                """
        )
        var batchSize = 100_000

        @Option(help: "Batches written at once while the next ones are read.")
        var concurrency = 3

        @Argument(help: "The file.")
        var file: String

        func run() async throws {
            let format = try resolvedFormat()
            var defaultEnvironment: APNsEnvironment?
            if let environment {
                defaultEnvironment = try parseEnvironment(environment)
            }
            guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
            guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1") }
            var reader: DeviceFileReader
            do {
                reader = try DeviceFileReader(path: file, format: format, defaultEnvironment: defaultEnvironment)
            } catch let error as DeviceFileError {
                throw ValidationError(error.description)
            }
            let start = ContinuousClock.now
            let (imported, rejected) = try await ClientSession.withRegistry(options, app: app) { session in
                let registry = session.registry
                var bar = ProgressBar(label: "importing", toStandardError: true)
                var imported = 0
                var rejected = 0
                // Reading and parsing go on while up to `concurrency` batches are written.
                try await withThrowingTaskGroup(of: (Int, Int).self) { group in
                    var inFlight = 0
                    while let (batch, bad) = try reader.nextBatch(limit: batchSize) {
                        for error in bad {
                            printError("pushfleet: \(file): \(error)")
                        }
                        rejected += bad.count
                        if inFlight == concurrency, let (bound, refused) = try await group.next() {
                            inFlight -= 1
                            imported += bound
                            rejected += refused
                        }
                        group.addTask { try await bind(batch, registry: registry) }
                        inFlight += 1
                        if !options.json {
                            bar.update(
                                done: reader.bytesRead >> 10, total: max(reader.fileSize >> 10, 1),
                                detail: "KiB · \(ProgressBar.grouped(imported)) devices")
                        }
                    }
                    for try await (bound, refused) in group {
                        imported += bound
                        rejected += refused
                    }
                }
                if !options.json { bar.finish() }
                return (imported, rejected)
            }
            let elapsed = ContinuousClock.now - start
            let seconds = elapsed / .seconds(1)
            if options.json {
                let summary: JSONValue = [
                    "app": .string(app), "imported": .number(JSONNumber(imported)), "rejected": .number(JSONNumber(rejected)),
                ]
                print(String(decoding: summary.compactData(), as: UTF8.self))
            } else {
                print(
                    "▸ imported \(ProgressBar.grouped(imported)) devices into app \(app) in \(String(format: "%.1f", seconds)) s; \(rejected) line(s) rejected"
                )
            }
            if rejected > 0 { throw ExitCode(1) }
        }

        /// Binds a batch; a device the registry refuses (its openid or a tag) is reported and
        /// left out, and the rest bound.
        private func bind(_ batch: [DeviceRegistration], registry: DeviceRegistry) async throws -> (Int, Int) {
            var devices = batch
            var refused = 0
            while !devices.isEmpty {
                do {
                    try await registry.bind(devices, app: try kind.registry(of: app))
                    return (devices.count, refused)
                } catch let error as StoreError {
                    guard let field = error.field, field.hasPrefix("devices["),
                        let close = field.firstIndex(of: "]"),
                        let index = Int(field[field.index(field.startIndex, offsetBy: 8)..<close]), devices.indices.contains(index)
                    else { throw error }
                    printError("pushfleet: \(file): device \(devices[index].token.hex): \(field): \(error.message)")
                    devices.remove(at: index)
                    refused += 1
                }
            }
            return (0, refused)
        }

        private func resolvedFormat() throws -> DeviceFileReader.Format {
            if let format {
                guard let value = DeviceFileReader.Format(rawValue: format) else { throw ValidationError("--format must be csv or jsonl") }
                return value
            }
            let lower = file.lowercased()
            if lower.hasSuffix(".csv") { return .csv }
            if lower.hasSuffix(".jsonl") || lower.hasSuffix(".ndjson") { return .jsonl }
            throw ValidationError("cannot tell the format of \(file) from its extension; pass --format csv or --format jsonl")
        }
    }

    /// `pushfleet devices bind TOKEN --app APP --environment ENV [--openid U] [--tag T]…`
    struct Bind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bind a device (register it, log a user in on it, tag it).")

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "sandbox or production.") var environment: String
        @Option(help: "The user logged in on the device.") var openid: String?
        @Option(name: .customLong("tag"), help: "A tag (repeatable).") var tags: [String] = []
        @Option(help: "The device's IANA time zone (Europe/Paris); kept as it is when not given.") var timeZone: String?
        @OptionGroup var kind: TokenKindOption
        @Argument(help: "The device token (hex).") var token: String

        func run() async throws {
            let deviceToken = try parseToken(token)
            let environment = try parseEnvironment(environment)
            if let timeZone, let problem = TimeZoneName.problem(timeZone) {
                throw ValidationError("--time-zone: \(problem)")
            }
            try await ClientSession.withRegistry(options, app: app) { session in
                try await session.registry.bind(
                    app: try kind.registry(of: app), token: deviceToken, environment: environment, openID: openid, tags: tags,
                    timeZone: timeZone)
                try await printDevice(deviceToken, session: session)
            }
        }

        private func printDevice(_ token: DeviceToken, session: ClientSession) async throws {
            let registry = try kind.registry(of: app)
            guard let record = try await session.registry.device(app: registry, token: token) else { return }
            let time = try await session.registry.deviceTime(app: registry, token: token)
            if options.json {
                print(String(decoding: record.jsonValue(with: time).compactData(), as: UTF8.self))
            } else {
                print(
                    "▸ bound \(record.token.hex) (\(record.environment.rawValue)) openid \(record.openID ?? "-") tags \(record.tags.sorted().joined(separator: ",")) time zone \(time.timeZone ?? "-")"
                )
            }
        }
    }

    /// `pushfleet devices unbind TOKEN --app APP`
    struct Unbind: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unbind a device (logout, uninstall): remove it from every set and mapping.",
            discussion: "Exit status: 0 removed, 2 not registered.")

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @OptionGroup var kind: TokenKindOption
        @Argument(help: "The device token (hex).") var token: String

        func run() async throws {
            let deviceToken = try parseToken(token)
            let removed = try await ClientSession.withRegistry(options, app: app) { session in
                return try await session.registry.unbind(app: try kind.registry(of: app), token: deviceToken)
            }
            print(
                options.json
                    ? #"{"token":"\#(deviceToken.hex)","removed":\#(removed)}"#
                    : removed ? "▸ unbound \(deviceToken.hex)" : "device \(deviceToken.hex) is not registered")
            if !removed { throw ExitCode(2) }
        }
    }

    /// `pushfleet devices tags TOKEN --app APP [--add T]… [--remove T]…`
    struct Tags: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a device's tags, after adding and removing some.",
            discussion: "Exit status: 0, or 2 when the device is not registered.")

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "A tag to add (repeatable).") var add: [String] = []
        @Option(help: "A tag to remove (repeatable).") var remove: [String] = []
        @OptionGroup var kind: TokenKindOption
        @Argument(help: "The device token (hex).") var token: String

        func run() async throws {
            let deviceToken = try parseToken(token)
            let tags: [String]
            do {
                tags = try await ClientSession.withRegistry(options, app: app) { session in
                    let registry = session.registry
                    let registryApp = try kind.registry(of: app)
                    if !add.isEmpty { _ = try await registry.addTags(add, app: registryApp, token: deviceToken) }
                    if !remove.isEmpty { _ = try await registry.removeTags(remove, app: registryApp, token: deviceToken) }
                    return try await registry.tags(app: registryApp, token: deviceToken).sorted()
                }
            } catch let error as StoreError where error.code == .deviceNotRegistered {
                printError("pushfleet: device \(deviceToken.hex) is not registered for app \(app)")
                throw ExitCode(2)
            }
            if options.json {
                print(String(decoding: JSONValue.object(["tags": .array(tags.map { .string($0) })]).compactData(), as: UTF8.self))
            } else {
                print(tags.joined(separator: "\n"))
            }
        }
    }
}

extension DevicesCommand {
    /// `pushfleet devices badge TOKEN --app APP [--set N]`
    struct Badge: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the badge the server keeps for a device, after setting it.",
            discussion: """
                Campaigns whose aps.badge is {"increment": N} or {"set": N} count each device's badge, once per \
                campaign and device; the app resets it when it is opened (--set 0, or PUT …/devices/{token}/badge). \
                Exit status: 0, 2 when the device is not registered, 64 usage.
                """)

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "The number to set (0 to 65535; 0 removes the badge).") var set: Int?
        @Argument(help: "The device token (hex).") var token: String

        func validate() throws {
            if let set, !BadgeRule.numbers.contains(set) {
                throw ValidationError("--set must be 0 to \(BadgeRule.maxValue), is \(set)")
            }
        }

        func run() async throws {
            let deviceToken = try parseToken(token)
            let badge: Int? = try await ClientSession.withRegistry(options, app: app) { session in
                guard let device = try await session.registry.deviceIDs(app: app, tokens: [deviceToken])[0] else { return nil }
                if let set { try await session.badges.set(app: app, device: device, to: set) }
                return try await session.badges.badge(app: app, device: device)
            }
            guard let badge else {
                printError("pushfleet: device \(deviceToken.hex) is not registered for app \(app)")
                throw ExitCode(2)
            }
            if options.json {
                let answer = JSONValue.object(["token": .string(deviceToken.hex), "badge": .number(JSONNumber(badge))])
                print(String(decoding: answer.compactData(), as: UTF8.self))
            } else {
                print(badge)
            }
        }
    }

    /// `pushfleet devices location TOKEN --app APP [--lat LAT --lon LON | --forget]`
    struct Location: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show where a device last said it was, after recording (--lat/--lon) or forgetting (--forget) it.",
            discussion: """
                A location is kept coarsened to registry.location-precision-km (default 1 km) and forgotten after \
                registry.location-ttl-days days after the day of the report (default 7); campaigns with --area reach the devices located in their circle. \
                Exit status: 0, 2 when the device is not registered (recording) or has no location (showing), 64 usage.
                """)

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        // Unconditional: a negative number is a value, not an option.
        @Option(parsing: .unconditional, help: "The latitude to record, degrees (-85.05112878 to 85.05112878).") var lat: Double?
        @Option(parsing: .unconditional, help: "The longitude to record, degrees (-180 to 180).") var lon: Double?
        @Flag(help: "Forget the device's location.") var forget = false
        @Argument(help: "The device token (hex).") var token: String

        func validate() throws {
            guard (lat == nil) == (lon == nil) else { throw ValidationError("--lat and --lon go together") }
            if forget, lat != nil { throw ValidationError("--forget and --lat/--lon are exclusive") }
            if let lat, let lon, let problem = GeoPoint.check(latitude: lat, longitude: lon) {
                throw ValidationError("--\(problem.field) \(problem.message)")
            }
        }

        func run() async throws {
            let deviceToken = try parseToken(token)
            if forget {
                let forgotten = try await ClientSession.withRegistry(options, app: app) { session in
                    try await session.registry.forgetLocation(app: app, token: deviceToken)
                }
                print(options.json ? #"{"token":"\#(deviceToken.hex)","forgotten":\#(forgotten)}"# : forgotten ? "forgotten" : "had no location")
                return
            }
            let location: DeviceLocation? = try await ClientSession.withRegistry(options, app: app) { session in
                guard let lat, let lon else { return try await session.registry.location(app: app, token: deviceToken) }
                do {
                    return try await session.registry.setLocation(app: app, token: deviceToken, GeoPoint(latitude: lat, longitude: lon))
                } catch let error as StoreError where error.code == .deviceNotRegistered {
                    return nil
                }
            }
            guard let location else {
                printError(
                    "pushfleet: device \(deviceToken.hex) " + (lat == nil ? "of app \(app) has no location" : "is not registered for app \(app)"))
                throw ExitCode(2)
            }
            let expires = Date(timeIntervalSince1970: Double(location.expiresAt) / 1000)
            if options.json {
                print(String(decoding: location.jsonValue(token: deviceToken).compactData(), as: UTF8.self))
            } else {
                print("\(location.point.latitude),\(location.point.longitude) until \(expires.formatted(.iso8601))")
            }
        }
    }

    /// `pushfleet devices export --app APP [--output FILE]`
    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write every device of an app as JSON lines, streamed shard by shard (constant memory).",
            discussion: """
                One line per device: {"token", "environment", "openid", "tags", "registered-at", "suspect", \
                "time-zone" (when it has one)}, which `devices import` reads back (registration times and time zones \
                included). The file is written under a \
                temporary name and renamed when complete, so a failed export leaves no partial FILE. \
                Exit status: 0.
                """)

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "The file to write (default: standard output).") var output: String?
        @OptionGroup var kind: TokenKindOption

        func run() async throws {
            let temporary = output.map { "\($0).partial" }
            let handle: FileHandle
            if let temporary {
                guard FileManager.default.createFile(atPath: temporary, contents: nil) else {
                    throw ValidationError("cannot create \(temporary)")
                }
                handle = try FileHandle(forWritingTo: URL(fileURLWithPath: temporary))
            } else {
                handle = FileHandle.standardOutput
            }
            let exported: Int
            do {
                exported = try await ClientSession.withRegistry(options, app: app) { session in
                    var count = 0
                    try await session.registry.forEachExportLine(app: try kind.registry(of: app)) { page in
                        var lines = Data()
                        for line in page {
                            lines.append(line.compactData())
                            lines.append(UInt8(ascii: "\n"))
                        }
                        try handle.write(contentsOf: lines)
                        count += page.count
                    }
                    return count
                }
                if let temporary, let output {
                    try handle.close()
                    // rename(2) replaces an earlier FILE in one step: there is never a moment
                    // without one, and a failed rename leaves the earlier one as it was.
                    guard rename(temporary, output) == 0 else {
                        throw ValidationError("cannot rename \(temporary) to \(output): \(String(cString: strerror(errno)))")
                    }
                }
            } catch {
                if let temporary {
                    try? handle.close()
                    try? FileManager.default.removeItem(atPath: temporary)
                }
                throw error
            }
            if let output { printError("▸ exported \(exported) devices of \(app) to \(output)") }
        }
    }

    /// `pushfleet devices remove-tag TAG --app APP`
    struct RemoveTag: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove-tag",
            abstract: "Remove a tag from every device of an app that carries it.",
            discussion: "Reads every device of the app, shard by shard; devices change one by one, by compare and set. Exit status: 0.")

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Argument(help: "The tag.") var tag: String

        func run() async throws {
            let removed = try await ClientSession.withRegistry(options, app: app) { session in
                return try await session.registry.removeTagFromEveryDevice(app: app, tag: tag)
            }
            let value: JSONValue = ["tag": .string(tag), "devices": .number(JSONNumber(removed))]
            print(options.json ? String(decoding: value.compactData(), as: UTF8.self) : "▸ removed \(tag) from \(removed) devices")
        }
    }

    /// `pushfleet devices suspects --app APP [--environment E] [--limit N]`
    struct Suspects: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List devices kept aside as suspect: token, environment, APNs's reason, since when.",
            discussion: """
                APNs's BadDeviceToken and DeviceTokenNotForTopic never remove a device: it is kept out of its \
                environment's audiences until it binds again, or until you restore it (`devices restore`) or unbind it \
                (`devices unbind`). Exit status: 0.
                """)

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Option(help: "Only this environment (sandbox or production).") var environment: String?
        @Option(help: "List at most this many.") var limit = 1_000

        func run() async throws {
            let environments = try selectedEnvironments(environment)
            try await ClientSession.withRegistry(options, app: app) { session in
                var listed = 0
                try await forEachSuspect(session, app: app, environments: environments) { record in
                    guard listed < limit else { return false }
                    listed += 1
                    let suspicion = record.suspicion
                    if options.json {
                        let line: JSONValue = [
                            "token": .string(record.token.hex), "environment": .string(record.environment.rawValue),
                            "reason": suspicion.map { .string($0.reason) } ?? .null,
                            "since": suspicion.map { .number(JSONNumber(Int($0.since))) } ?? .null,
                        ]
                        print(String(decoding: line.compactData(), as: UTF8.self))
                    } else {
                        print(
                            "\(record.token.hex) \(record.environment.rawValue) \(suspicion?.reason ?? "-") since \(suspicion.map { String($0.since) } ?? "-")"
                        )
                    }
                    return true
                }
            }
        }
    }

    /// `pushfleet devices restore --app APP (TOKEN… | --all)`
    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Return devices kept aside as suspect to their environment's audiences.",
            discussion: "Exit status: 0 every named device restored (or --all done), 2 some named device was not suspect.")

        @OptionGroup var options: ClientOptions
        @Option(help: "The app id.") var app: String
        @Flag(help: "Restore every suspect device of the app (of --environment only, when given).") var all = false
        @Option(help: "With --all: only this environment (sandbox or production).") var environment: String?
        @Argument(help: "Device tokens (hex).") var tokens: [String] = []

        func validate() throws {
            guard all != !tokens.isEmpty else { throw ValidationError("name device tokens, or --all") }
        }

        func run() async throws {
            let environments = try selectedEnvironments(environment)
            let named = try tokens.map(parseToken)
            let (restored, notSuspect) = try await ClientSession.withRegistry(options, app: app) { session in
                let registry = session.registry
                var restored = 0
                var notSuspect: [String] = []
                if all {
                    try await forEachSuspect(session, app: app, environments: environments) { record in
                        if try await registry.restoreSuspect(app: app, token: record.token) { restored += 1 }
                        return true
                    }
                }
                for token in named {
                    if try await registry.restoreSuspect(app: app, token: token) {
                        restored += 1
                    } else {
                        notSuspect.append(token.hex)
                    }
                }
                return (restored, notSuspect)
            }
            if options.json {
                print(
                    String(
                        decoding: JSONValue.object(["restored": .number(JSONNumber(restored)), "not-suspect": .array(notSuspect.map { .string($0) })])
                            .compactData(), as: UTF8.self))
            } else {
                print("▸ restored \(restored) device(s)")
                for token in notSuspect { printError("device \(token) is not kept aside") }
            }
            if !notSuspect.isEmpty { throw ExitCode(2) }
        }
    }
}

private func selectedEnvironments(_ name: String?) throws -> [APNsEnvironment] {
    guard let name else { return APNsEnvironment.allCases }
    return [try parseEnvironment(name)]
}

/// Calls `body` with the record of every suspect device of `app` in `environments`, shard by
/// shard (memory bounded by one scan page; a page's records read in one pipeline), until it
/// returns false.
private func forEachSuspect(
    _ session: ClientSession, app: String, environments: [APNsEnvironment], _ body: (DeviceRecord) async throws -> Bool
) async throws {
    let registry = session.registry
    let tasks = try await registry.layout(app: app).taskCount
    for environment in environments {
        for shard in 0..<tasks {
            let pages = registry.pages(
                app: app, task: ShardTask(shard: shard, of: tasks), environment: environment, filter: .suspects, pageSize: 500)
            for try await page in pages {
                for case let record? in try await registry.devices(app: app, tokens: page.tokens) {
                    guard try await body(record) else { return }
                }
            }
        }
    }
}

/// An `--environment` argument, or a usage error.
func parseEnvironment(_ name: String) throws -> APNsEnvironment {
    guard let environment = APNsEnvironment(rawValue: name) else { throw ValidationError("--environment must be sandbox or production") }
    return environment
}

/// `environment`, when `app` sends to it; a usage error otherwise.
@discardableResult
func requireEnvironment(_ environment: APNsEnvironment, of app: AppSettings) throws -> APNsEnvironment {
    guard app.environments.contains(environment) else { throw ValidationError("app \(app.id) does not send to \(environment.rawValue)") }
    return environment
}

/// A device token argument, or a usage error saying what is wrong with it.
func parseToken(_ text: String) throws -> DeviceToken {
    do {
        return try DeviceToken(hex: text)
    } catch {
        throw ValidationError("'\(text.prefix(80))' is not a device token: \(error)")
    }
}

/// `--kind`: which of the devices' tokens a registry command works on.
struct TokenKindOption: ParsableArguments {
    @Option(help: "The token kind: device, voip or push-to-start:<ActivityAttributes type>.")
    var kind: String = "device"

    /// The registry of the kind's tokens of `app` (``TokenKind/registry(of:)``).
    func registry(of app: String) throws -> String {
        guard let parsed = TokenKind(kind) else {
            throw ValidationError("--kind must be device, voip or push-to-start:<type> (1 to 64 characters of A-Z a-z 0-9 _ .), got '\(kind)'")
        }
        return parsed.registry(of: app)
    }
}
