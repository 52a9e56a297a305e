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
    /// Accepted sockets that have no upstream (a silent listener): closed by ``close()``.
    var silent: [Int32] = []
    /// Proxied connections, by id.
    var links: [Int: Link] = [:]
    var nextLinkID = 0
    var closed = false
    var clientBytes: [UInt8] = []
    /// Where each read of client bytes ended in ``clientBytes``: what one read got is, on
    /// loopback, what the client flushed at once (or part of it, never two flushes' worth
    /// when the reader keeps up).
    var clientReadEnds: [Int] = []
  }

  /// A proxied connection: its two sockets, closed by the last of its two pump threads to
  /// stop, so that a descriptor is never closed while a pump may still use it (a closed
  /// descriptor's number is soon reused by a new connection).
  private struct Link {
    var client: Int32
    var upstream: Int32
    var pumpsRunning = 2
    /// Ended by ``resetConnections()`` or ``close()``: the pumps only tear down.
    var ended = false
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
    Thread.detachNewThread { self.acceptLoop() }
  }

  /// Every byte clients sent so far, in order (one connection's worth per test, by design).
  var clientReadEnds: [Int] {
    self.state.withLock { $0.clientReadEnds }
  }

  var clientBytes: [UInt8] {
    self.state.withLock { $0.clientBytes }
  }

  /// From now on, bytes in either direction are read and dropped: the peers see a connection
  /// that is open but silent.
  func stall() {
    self.state.withLock { $0.stalled = true }
  }

  /// Resets every connection made so far (RST: SO_LINGER 0), as a network fault would, and
  /// keeps listening for new ones.
  func resetConnections() {
    self.endLinks()
  }

  /// Closes the listener and every connection.
  func close() {
    let silent = self.state.withLock { state in
      state.closed = true
      defer { state.silent = [] }
      return state.silent
    }
    shutdown(self.listener, Int32(SHUT_RDWR))
    Glibc.close(self.listener)
    for socket in silent {
      shutdown(socket, Int32(SHUT_RDWR))
      Glibc.close(socket)
    }
    self.endLinks()
  }

  /// Ends every proxied connection: each socket is set to reset when closed and shut down,
  /// which wakes its pumps; the last pump of each connection closes both sockets.
  private func endLinks() {
    self.state.withLock { state in
      for (id, var link) in state.links where !link.ended {
        link.ended = true
        state.links[id] = link
        for socket in [link.client, link.upstream] {
          var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
          setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
          shutdown(socket, Int32(SHUT_RDWR))
        }
      }
    }
  }

  private func acceptLoop() {
    while true {
      let client = accept(self.listener, nil, nil)
      guard client >= 0 else { return }
      guard let upstreamPort = self.upstreamPort else {
        let kept = self.state.withLock { state in
          guard !state.closed else { return false }
          state.silent.append(client)
          return true
        }
        if !kept { Glibc.close(client) }
        continue
      }
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
      let id: Int? = self.state.withLock { state in
        guard !state.closed, connected == 0 else { return nil }
        let id = state.nextLinkID
        state.nextLinkID += 1
        state.links[id] = Link(client: client, upstream: upstream)
        return id
      }
      guard let id else {
        Glibc.close(client)
        Glibc.close(upstream)
        continue
      }
      Thread.detachNewThread { self.pump(link: id, from: client, to: upstream, recording: self.recordsClientBytes) }
      Thread.detachNewThread { self.pump(link: id, from: upstream, to: client, recording: false) }
    }
  }

  private func pump(link id: Int, from source: Int32, to destination: Int32, recording: Bool) {
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let count = read(source, &buffer, buffer.count)
      let (stalled, ended) = self.state.withLock { state in
        if recording, count > 0 {
          state.clientBytes += buffer[0..<max(count, 0)]
          state.clientReadEnds.append(state.clientBytes.count)
        }
        return (state.stalled, state.links[id]?.ended ?? true)
      }
      if count <= 0 || ended {
        break
      }
      if stalled { continue }
      var sent = 0
      while sent < count {
        let written = buffer[sent..<count].withUnsafeBytes { write(destination, $0.baseAddress, count - sent) }
        guard written > 0 else { break }
        sent += written
      }
      if sent < count { break }
    }
    // The peer closed (or the link ended): pass the half-close on; the last pump closes both.
    let last: Link? = self.state.withLock { state in
      guard var link = state.links[id] else { return nil }
      if !link.ended { shutdown(destination, Int32(SHUT_WR)) }
      link.pumpsRunning -= 1
      if link.pumpsRunning == 0 {
        state.links[id] = nil
        return link
      }
      state.links[id] = link
      return nil
    }
    if let last {
      Glibc.close(last.client)
      Glibc.close(last.upstream)
    }
  }
}
