import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The TCP sockets this process holds, found by their descriptors.
enum ProcessSockets {
    /// Sets `TCP_NODELAY` on this process's listening TCP sockets bound to `ports`, so that the
    /// connections they accept inherit it (Linux and Darwin copy it to accepted sockets).
    /// Returns how many listeners were changed.
    static func disableNagle(onListenersAt ports: Set<UInt16>) -> Int {
        var changed = 0
        for descriptor in openDescriptors() where isListener(descriptor) {
            guard let port = localPort(of: descriptor), ports.contains(port) else { continue }
            var on: Int32 = 1
            if setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 {
                changed += 1
            }
        }
        return changed
    }

    /// The descriptors open in this process.
    static func openDescriptors() -> [Int32] {
        #if os(Linux)
            let directory = "/proc/self/fd"
        #else
            let directory = "/dev/fd"
        #endif
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap { Int32($0) }
    }

    /// The local port of an IPv4 or IPv6 socket, or `nil` for any other descriptor.
    static func localPort(of descriptor: Int32) -> UInt16? {
        address(of: descriptor, getsockname)
    }

    /// The remote port of a connected IPv4 or IPv6 socket.
    static func remotePort(of descriptor: Int32) -> UInt16? {
        address(of: descriptor, getpeername)
    }

    private static func isListener(_ descriptor: Int32) -> Bool {
        var accepting: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(descriptor, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &length) == 0 && accepting != 0
    }

    private static func address(
        of descriptor: Int32,
        _ query: (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32
    ) -> UInt16? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { query(descriptor, $0, &length) }
        }
        guard result == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
            }
        case AF_INET6:
            return withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
        default:
            return nil
        }
    }
}
