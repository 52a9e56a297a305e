import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 that forwards to a local port until told to stall, or a listener
/// that accepts connections and never answers (no upstream).
///
/// Blocking sockets and one thread per direction: it carries a test's handful of connections.
final class LoopbackProxy: Sendable {
  /// The port clients connect to.
  let port: Int
  private let listener: Int32
  private let upstreamPort: Int?
  private let state = Mutex(State())

  private let recordsClientBytes: Bool

  private struct State {
    var stalled = false
    var sockets: [Int32] = []
    var closed = false
    var clientBytes: [UInt8] = []
  }

  /// - Parameters:
  ///   - upstreamPort: Where to forward; `nil` accepts and never sends a byte.
  ///   - recordingClientBytes: Whether to keep every byte the clients send (see
  ///     ``clientBytes``).
  init(upstreamPort: Int?, recordingClientBytes: Bool = false) throws {
    self.upstreamPort = upstreamPort
    self.recordsClientBytes = recordingClientBytes
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0, listen(fd, 16) == 0 else {
      Glibc.close(fd)
      throw ToolFailure(description: "the proxy could not listen: errno \(errno)")
    }
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    self.listener = fd
    self.port = Int(UInt16(bigEndian: address.sin_port))
    self.state.withLock { $0.sockets.append(fd) }
    Thread.detachNewThread { self.acceptLoop() }
  }

  /// Every byte clients sent so far, in order (one connection's worth per test, by design).
  var clientBytes: [UInt8] {
    self.state.withLock { $0.clientBytes }
  }

  /// From now on, bytes in either direction are read and dropped: the peers see a connection
  /// that is open but silent.
  func stall() {
    self.state.withLock { $0.stalled = true }
  }

  /// Closes the listener and every connection.
  func close() {
    let sockets = self.state.withLock { state in
      state.closed = true
      return state.sockets
    }
    for socket in sockets {
      shutdown(socket, Int32(SHUT_RDWR))
      Glibc.close(socket)
    }
  }

  private func acceptLoop() {
    while true {
      let client = accept(self.listener, nil, nil)
      guard client >= 0 else { return }
      guard self.track(client) else { return }
      guard let upstreamPort = self.upstreamPort else { continue }
      let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = sockaddr_in()
      address.sin_family = sa_family_t(AF_INET)
      address.sin_addr.s_addr = inet_addr("127.0.0.1")
      address.sin_port = UInt16(upstreamPort).bigEndian
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard connected == 0, self.track(upstream) else { return }
      Thread.detachNewThread { self.pump(from: client, to: upstream, recording: self.recordsClientBytes) }
      Thread.detachNewThread { self.pump(from: upstream, to: client, recording: false) }
    }
  }

  private func track(_ socket: Int32) -> Bool {
    self.state.withLock { state in
      guard !state.closed else { return false }
      state.sockets.append(socket)
      return true
    }
  }

  private func pump(from source: Int32, to destination: Int32, recording: Bool) {
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = read(source, &buffer, buffer.count)
      guard count > 0 else {
        shutdown(destination, Int32(SHUT_WR))
        return
      }
      let stalled = self.state.withLock { state in
        if recording { state.clientBytes += buffer[0..<count] }
        return state.stalled
      }
      if stalled { continue }
      var sent = 0
      while sent < count {
        let written = buffer[sent..<count].withUnsafeBytes { write(destination, $0.baseAddress, count - sent) }
        guard written > 0 else { return }
        sent += written
      }
    }
  }
}
