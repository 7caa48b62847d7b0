import CHiredis

extension RedisReply {
    /// Converts a hiredis reply tree; the caller still owns (and frees) `reply`.
    init(hiredis reply: UnsafePointer<redisReply>) {
        let reply = reply.pointee
        switch reply.type {
        case REDIS_REPLY_STRING:
            self = .bulk(Array(UnsafeRawBufferPointer(start: reply.str, count: reply.len)))
        case REDIS_REPLY_STATUS:
            self = .status(Self.text(reply))
        case REDIS_REPLY_ERROR:
            self = .error(Self.text(reply))
        case REDIS_REPLY_INTEGER:
            self = .integer(Int64(reply.integer))
        case REDIS_REPLY_ARRAY:
            var elements: [RedisReply] = []
            elements.reserveCapacity(reply.elements)
            for index in 0..<reply.elements {
                if let element = reply.element[index] {
                    elements.append(RedisReply(hiredis: element))
                } else {
                    elements.append(.null)
                }
            }
            self = .array(elements)
        default:
            self = .null
        }
    }

    private static func text(_ reply: redisReply) -> String {
        String(decoding: UnsafeRawBufferPointer(start: reply.str, count: reply.len), as: UTF8.self)
    }
}
