/// Commands encoded as RESP multi-bulk requests (`*argc\r\n$len\r\narg\r\n…`) in one contiguous
/// buffer: written to the socket as it is (``RedisExchange``), or handed to hiredis with a single
/// `redisAppendFormattedCommand` (the handshake's blocking calls).
///
/// This is the array form of hiredis's command API, like `redisAppendCommandArgv`, minus its
/// per-command cost: `redisAppendCommandArgv` formats every command into a fresh `sds` with
/// `sdscatfmt` and then copies it into the output buffer, which profiling showed to be most of
/// the client's CPU time in pipelined batches. Encoding here is binary safe by construction:
/// every argument is length-prefixed.
struct HiredisCommandBuffer {
    /// The encoded commands.
    let bytes: [UInt8]

    /// The number of commands (and so of replies to read).
    let count: Int

    /// Encodes `commands`; each must have at least one argument (the command name).
    ///
    /// Two passes: the exact size first, then every byte written in place into one allocation
    /// (appending byte by byte and reversing digits in a slice cost more than the socket write).
    init(_ commands: [[RedisArgument]]) {
        count = commands.count
        var size = 0
        for command in commands {
            precondition(!command.isEmpty, "a Redis command needs at least its name")
            size += Self.lineSize(command.count)
            for argument in command {
                let length = Self.encodedLength(argument)
                size += Self.lineSize(length) + length + 2
            }
        }
        bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
            var writer = Writer(buffer: buffer)
            for command in commands {
                writer.line(marker: UInt8(ascii: "*"), command.count)
                for argument in command {
                    writer.line(marker: UInt8(ascii: "$"), Self.encodedLength(argument))
                    switch argument {
                    case .bytes(let value):
                        value.withUnsafeBytes { writer.append($0) }
                    case .string(var value):
                        value.withUTF8 { writer.append(UnsafeRawBufferPointer($0)) }
                    case .integer(let value):
                        if value < 0 { writer.append(byte: UInt8(ascii: "-")) }
                        writer.decimal(value.magnitude)
                    }
                    writer.append(byte: UInt8(ascii: "\r"))
                    writer.append(byte: UInt8(ascii: "\n"))
                }
            }
            precondition(writer.position == size, "RESP size computed \(size), wrote \(writer.position)")
            initialized = size
        }
    }

    /// Calls `body` with the encoded bytes, valid only during the call.
    func withEncodedCommands<Result>(_ body: (UnsafePointer<CChar>, Int) throws -> Result) rethrows -> Result {
        try bytes.withUnsafeBytes { bytes in
            try body(bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count)
        }
    }

    /// The bytes of an argument's value.
    private static func encodedLength(_ argument: RedisArgument) -> Int {
        switch argument {
        case .bytes(let value): value.count
        case .string(let value): value.utf8.count
        case .integer(let value): (value < 0 ? 1 : 0) + digits(value.magnitude)
        }
    }

    /// A marker, a non-negative decimal and CRLF.
    private static func lineSize(_ value: Int) -> Int {
        1 + digits(UInt(value)) + 2
    }

    private static func digits(_ value: UInt) -> Int {
        var count = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            count += 1
        }
        return count
    }

    /// Writes into the buffer being initialised; the size was computed beforehand.
    private struct Writer {
        let buffer: UnsafeMutableBufferPointer<UInt8>
        var position = 0

        mutating func append(byte: UInt8) {
            buffer[position] = byte
            position += 1
        }

        mutating func append(_ bytes: UnsafeRawBufferPointer) {
            guard !bytes.isEmpty else { return }
            UnsafeMutableRawPointer(buffer.baseAddress! + position).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
            position += bytes.count
        }

        /// `marker`, `value` in decimal (never negative here), CRLF.
        mutating func line(marker: UInt8, _ value: Int) {
            append(byte: marker)
            decimal(UInt(value))
            append(byte: UInt8(ascii: "\r"))
            append(byte: UInt8(ascii: "\n"))
        }

        mutating func decimal(_ value: UInt) {
            let end = position + HiredisCommandBuffer.digits(value)
            var rest = value
            var index = end
            repeat {
                index -= 1
                buffer[index] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            position = end
        }
    }
}
