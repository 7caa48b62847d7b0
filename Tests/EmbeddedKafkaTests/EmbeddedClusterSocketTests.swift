import Foundation
import Logging
import Testing

@testable import EmbeddedKafka

#if canImport(Glibc)
    import Glibc
#endif

/// The embedded brokers' connections, seen from both ends inside this process.
@Suite struct EmbeddedClusterSocketTests {
    @Test func everyBrokerAcceptsConnectionsWithNaglesAlgorithmOff() throws {
        let cluster = try EmbeddedKafkaCluster(brokers: 2, logger: Logger(label: "pushfleet.test.embedded-kafka"))
        try #require(cluster.brokerPorts.count == 2)
        for port in cluster.brokerPorts {
            let client = try LoopbackClient(port: port)
            defer { client.close() }
            // An answer proves the broker accepted the connection; its end is then in our table.
            try client.exchangeApiVersions()
            let clientPort = try #require(ProcessSockets.localPort(of: client.descriptor))
            let accepted = ProcessSockets.openDescriptors().filter {
                ProcessSockets.localPort(of: $0) == port && ProcessSockets.remotePort(of: $0) == clientPort
            }
            try #require(accepted.count == 1, "the broker's end of the connection on port \(port)")
            var noDelay: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            #expect(getsockopt(accepted[0], Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, &length) == 0)
            #expect(noDelay != 0, "broker on port \(port) accepts with Nagle's algorithm on")
        }
    }
}

/// A blocking TCP client for one Kafka request: enough to make a broker accept and answer.
private struct LoopbackClient {
    let descriptor: Int32

    init(port: UInt16) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw SocketTestError("socket: errno \(errno)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            throw SocketTestError("connect to \(port): errno \(errno)")
        }
    }

    /// Sends ApiVersions v0 (correlation id 1, no client id) and reads the whole answer.
    func exchangeApiVersions() throws {
        let request: [UInt8] = [0, 0, 0, 10, 0, 18, 0, 0, 0, 0, 0, 1, 0xFF, 0xFF]
        guard send(descriptor, request, request.count, 0) == request.count else {
            throw SocketTestError("send: errno \(errno)")
        }
        let header = try read(4)
        let length = header.reduce(0) { $0 << 8 | Int($1) }
        let body = try read(length)
        guard body.prefix(4) == [0, 0, 0, 1] else { throw SocketTestError("answer to another request: \(body.prefix(4))") }
    }

    func close() {
        Glibc.close(descriptor)
    }

    private func read(_ count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let result = bytes.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + received, count - received, 0) }
            guard result > 0 else { throw SocketTestError("recv after \(received) of \(count) bytes: errno \(errno)") }
            received += result
        }
        return bytes
    }
}

private struct SocketTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
