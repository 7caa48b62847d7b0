/// Commands encoded as RESP multi-bulk requests (`*argc\r\n$len\r\narg\r\n…`) in one contiguous
/// buffer, handed to hiredis with a single `redisAppendFormattedCommand`.
///
/// This is the array form of hiredis's command API, like `redisAppendCommandArgv`, minus its
/// per-command cost: `redisAppendCommandArgv` formats every command into a fresh `sds` with
/// `sdscatfmt` and then copies it into the output buffer, which profiling showed to be most of
/// the client's CPU time in pipelined batches. Encoding here is binary safe by construction:
/// every argument is length-prefixed.
struct HiredisCommandBuffer {
    private var bytes: [UInt8] = []

    /// The number of commands (and so of replies to read).
    let count: Int

    /// Encodes `commands`; each must have at least one argument (the command name).
    init(_ commands: [[RedisArgument]]) {
        count = commands.count
        bytes.reserveCapacity(commands.count * 48)
        for command in commands {
            precondition(!command.isEmpty, "a Redis command needs at least its name")
            appendLine(marker: UInt8(ascii: "*"), command.count)
            for argument in command {
                switch argument {
                case .bytes(let value):
                    appendBulk(value)
                case .string(var value):
                    value.withUTF8 { appendBulk($0) }
                case .integer(let value):
                    appendBulk(String(value).utf8)
                }
            }
        }
    }

    /// Calls `body` with the encoded bytes, valid only during the call.
    func withEncodedCommands<Result>(_ body: (UnsafePointer<CChar>, Int) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBytes { bytes in
            try body(bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count)
        }
    }

    private mutating func appendBulk(_ value: some Collection<UInt8>) {
        appendLine(marker: UInt8(ascii: "$"), value.count)
        bytes.append(contentsOf: value)
        bytes.append(UInt8(ascii: "\r"))
        bytes.append(UInt8(ascii: "\n"))
    }

    /// Appends `marker`, `value` in decimal (never negative here), and CRLF.
    private mutating func appendLine(marker: UInt8, _ value: Int) {
        bytes.append(marker)
        let start = bytes.count
        var remaining = value
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(remaining % 10))
            remaining /= 10
        } while remaining > 0
        bytes[start...].reverse()
        bytes.append(UInt8(ascii: "\r"))
        bytes.append(UInt8(ascii: "\n"))
    }
}
