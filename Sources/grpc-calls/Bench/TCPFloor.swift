internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The physical floor of a round trip on this machine: 1-byte ping-pong over loopback TCP
/// with plain blocking sockets and TCP_NODELAY, no HTTP/2, no gRPC.
enum TCPFloor {
  static func measure(roundTrips: Int) throws -> Tally {
    let listener = try Self.socketOrThrow()
    defer { close(listener) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    try Self.check(Self.withSockaddr(&address) { bind(listener, $0, $1) }, "bind")
    try Self.check(listen(listener, 1), "listen")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try Self.check(
      withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
      },
      "getsockname"
    )

    // The echo side runs on a thread of its own: blocking I/O, like the client side.
    let echo = Thread {
      let connection = accept(listener, nil, nil)
      guard connection >= 0 else { return }
      Self.noDelay(connection)
      var byte: UInt8 = 0
      while recv(connection, &byte, 1, 0) == 1 {
        _ = send(connection, &byte, 1, 0)
      }
      close(connection)
    }
    echo.start()

    let client = try Self.socketOrThrow()
    defer { close(client) }
    try Self.check(Self.withSockaddr(&address) { connect(client, $0, $1) }, "connect")
    Self.noDelay(client)

    var tally = Tally()
    var byte: UInt8 = 1
    let usage = ResourceUsage.now()
    let start = ContinuousClock.now
    for _ in 0 ..< roundTrips {
      let lap = ContinuousClock.now
      guard send(client, &byte, 1, 0) == 1, recv(client, &byte, 1, 0) == 1 else {
        throw BenchFailure(description: "loopback TCP ping-pong failed: errno \(errno)")
      }
      tally.record(microseconds: microseconds(since: lap))
    }
    tally.seconds = BenchClock.seconds(ContinuousClock.now - start)
    tally.addUsage(since: usage)
    tally.calls = roundTrips
    return tally
  }

  private static func socketOrThrow() throws -> Int32 {
    #if os(Linux)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw BenchFailure(description: "socket: errno \(errno)") }
    return fd
  }

  private static func noDelay(_ fd: Int32) {
    var one: Int32 = 1
    _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
  }

  private static func withSockaddr(
    _ address: inout sockaddr_in,
    _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32
  ) -> Int32 {
    withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        body($0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
  }

  private static func check(_ result: Int32, _ what: String) throws {
    guard result == 0 else { throw BenchFailure(description: "\(what): errno \(errno)") }
  }
}
