/// One run of a ``RedisScript`` with its keys and arguments, for
/// ``RedisConnection/evalScripts(_:)``, which sends many in one pipeline.
public struct RedisScriptCall: Sendable {
    public let script: RedisScript
    public let keys: [RedisArgument]
    public let arguments: [RedisArgument]

    public init(_ script: RedisScript, keys: [RedisArgument] = [], arguments: [RedisArgument] = []) {
        self.script = script
        self.keys = keys
        self.arguments = arguments
    }

    func command(sha1: String) -> [RedisArgument] {
        var command: [RedisArgument] = ["EVALSHA", .string(sha1), .integer(keys.count)]
        command.reserveCapacity(3 + keys.count + arguments.count)
        command += keys
        command += arguments
        return command
    }
}
