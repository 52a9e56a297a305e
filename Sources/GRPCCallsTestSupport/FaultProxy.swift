internal import Foundation

#if canImport(Glibc)
internal import GRPCCalls
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 that injects network faults between a client and a server, switched
/// at run time: refuse connections, reset them, cut them after some bytes, stall them (a black
/// hole), delay or throttle them, and go away and come back on the same port (a flap).
///
/// ```swift
/// let proxy = try FaultProxy(upstreamPort: server.port)
/// defer { proxy.close() }
/// // … calls to 127.0.0.1:\(proxy.port) …
/// proxy.stopListening()      // a flap: new connections are refused, open ones reset
/// proxy.inject(.stall)       // or: open connections go silent
/// try proxy.startListening() // the network is back, on the same port
/// ```
///
/// Without an upstream it is a listener that accepts connections and never sends a byte.
/// Blocking sockets and one thread per direction of each connection: it carries a test's
/// connections, not a server's.
public final class FaultProxy: Sendable {
  /// The port clients connect to; the same across ``stopListening()`` and ``startListening()``.
  public let port: Int
  private let state: LockedValue<State>
  private let recordsClientBytes: Bool

  private struct State {
    /// The listening socket; `nil` once closed.
    var listener: Int32?
    /// Whether ``listener`` listens (``stopListening()`` keeps it bound, not listening).
    var listening = true
    var upstreamPort: Int?
    var fault = Fault.none
    /// Accepted sockets that have no upstream (a silent listener): closed by ``close()``.
    var silent: [Int32] = []
    /// Proxied connections, by id.
    var links: [Int: Link] = [:]
    var nextLinkID = 0
    var accepted = 0
    var closed = false
    /// What clients sent, by link id, when recording.
    var recordings: [Int: ClientRecording] = [:]
    /// Bytes passed from servers to clients, every connection.
    var serverBytes = 0
  }

  /// A proxied connection: its two sockets, closed by the last of its two pump threads to
  /// stop, so that a descriptor is never closed while a pump may still use it (a closed
  /// descriptor's number is soon reused by a new connection).
  private struct Link {
    var client: Int32
    var upstream: Int32
    var pumpsRunning = 2
    /// Bytes passed on, both directions.
    var forwarded = 0
    /// Reset by a fault or ended by ``close()``: the pumps only tear down.
    var ended = false
  }

  /// Starts listening on a free port.
  ///
  /// - Parameters:
  ///   - upstreamPort: Where to forward, on 127.0.0.1; `nil` accepts and never sends a byte.
  ///   - recordingClientBytes: Whether to keep every byte the clients send (see
  ///     ``clientConnections``).
  public init(upstreamPort: Int?, recordingClientBytes: Bool = false) throws {
    self.recordsClientBytes = recordingClientBytes
    let (listener, port) = try Self.listen(port: 0)
    self.port = port
    self.state = LockedValue(State(listener: listener, upstreamPort: upstreamPort))
    Thread.detachNewThread { self.acceptLoop(listener) }
  }

  // MARK: Faults

  /// Applies `fault` to the bytes of every connection, open or new, from now on.
  public func inject(_ fault: Fault) {
    self.state.withLock { $0.fault = fault }
    if fault == .reset {
      self.endLinks()
    }
  }

  /// The fault applied now.
  public var fault: Fault {
    self.state.withLock { $0.fault }
  }

  /// Bytes in either direction are held from now on: ``inject(_:)`` with ``Fault/stall``.
  public func stall() {
    self.inject(.stall)
  }

  /// Resets every connection made so far (RST), as a network fault would, and keeps listening
  /// for new ones.
  public func resetConnections() {
    self.endLinks()
  }

  /// Stops listening, so that connections are refused, and resets the open ones: the network
  /// went away. ``startListening()`` brings it back on the same port.
  ///
  /// The port stays bound meanwhile (a socket that is bound but not listening refuses
  /// connections): released, it could be handed to another socket of the process — another
  /// proxy's listener, or a client connecting to this very port, which then connects to itself.
  public func stopListening() {
    self.state.withLock { state in
      guard let listener = state.listener, state.listening else { return }
      state.listening = false
      // Shutting down a listening socket stops it listening and wakes its accept loop; the
      // socket, bound again to the port at once, holds it until the next listen.
      shutdown(listener, Int32(SHUT_RD))
      // (The bind fails, harmlessly, when the kernel kept the socket bound.)
      var address = Self.loopback(port: self.port)
      _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    self.endLinks()
  }

  /// Listens again on ``port`` after ``stopListening()``; does nothing while listening.
  public func startListening() throws {
    let started: Int32? = try self.state.withLock { state in
      guard let listener = state.listener, !state.listening, !state.closed else { return nil }
      guard Glibc.listen(listener, 128) == 0 else {
        throw TestSupportFailure(
          description: "the proxy could not listen again on port \(self.port): errno \(errno)"
        )
      }
      state.listening = true
      return listener
    }
    if let started {
      Thread.detachNewThread { self.acceptLoop(started) }
    }
  }

  /// Forwards new connections to `port` from now on; open ones keep their server.
  public func redirect(toPort port: Int) {
    self.state.withLock { $0.upstreamPort = port }
  }

  /// Closes the listener and every connection.
  public func close() {
    let (listener, silent) = self.state.withLock { state in
      state.closed = true
      defer {
        state.silent = []
        state.listener = nil
      }
      return (state.listener, state.silent)
    }
    if let listener {
      shutdown(listener, Int32(SHUT_RDWR))
      Glibc.close(listener)
    }
    for socket in silent {
      shutdown(socket, Int32(SHUT_RDWR))
      Glibc.close(socket)
    }
    self.endLinks()
  }

  // MARK: What it saw

  /// How many connections the proxy accepted.
  public var acceptedConnections: Int {
    self.state.withLock { $0.accepted }
  }

  /// What clients sent so far, one recording per connection in the order they were accepted
  /// (a call may be retried on a second connection; each has its own preface and stream ids).
  public var clientConnections: [ClientRecording] {
    self.state.withLock { state in state.recordings.sorted { $0.key < $1.key }.map(\.value) }
  }

  /// Every frame clients sent so far, connection after connection.
  public var clientFrames: [RecordedHTTP2Frame] {
    self.clientConnections.flatMap(\.frames)
  }

  /// How many bytes servers have sent to clients through the proxy so far, every connection:
  /// what a server actually put on the wire, whatever its writer buffered.
  public var serverBytes: Int {
    self.state.withLock { $0.serverBytes }
  }

  // MARK: Machinery

  /// Binds a listening socket to 127.0.0.1:`port` (0: a free one).
  private static func listen(port: Int) throws -> (Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    // The port comes back after a flap while the old connections sit in TIME_WAIT.
    var reuse: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
    var address = Self.loopback(port: port)
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0, Glibc.listen(fd, 128) == 0 else {
      let code = errno
      Glibc.close(fd)
      throw TestSupportFailure(
        description: "the proxy could not listen on port \(port): errno \(code)"
      )
    }
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
  }

  private static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return address
  }

  /// Sets `socket` to send RST when closed, and shuts it down, which wakes its pump.
  private static func reset(_ socket: Int32) {
    var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
    setsockopt(socket, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
    shutdown(socket, Int32(SHUT_RDWR))
  }

  /// Ends every proxied connection with a reset; the last pump of each closes both sockets.
  private func endLinks() {
    self.state.withLock { state in
      for id in Array(state.links.keys) {
        Self.end(link: id, in: &state)
      }
    }
  }

  private static func end(link id: Int, in state: inout State) {
    guard var link = state.links[id], !link.ended else { return }
    link.ended = true
    state.links[id] = link
    Self.reset(link.client)
    Self.reset(link.upstream)
  }

  private func acceptLoop(_ listener: Int32) {
    while true {
      let client = accept(listener, nil, nil)
      guard client >= 0 else {
        // The listener stopped listening (stopListening or close) or failed for good.
        if errno == EINTR || errno == ECONNABORTED { continue }
        return
      }
      let (upstreamPort, fault, closed) = self.state.withLock { state in
        state.accepted += 1
        return (state.upstreamPort, state.fault, state.closed)
      }
      if closed || fault == .reset {
        Self.reset(client)
        Glibc.close(client)
        continue
      }
      guard let upstreamPort else {
        let kept = self.state.withLock { state in
          guard !state.closed else { return false }
          state.silent.append(client)
          return true
        }
        if !kept { Glibc.close(client) }
        continue
      }
      self.connect(client, to: upstreamPort)
    }
  }

  private func connect(_ client: Int32, to upstreamPort: Int) {
    let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = Self.loopback(port: upstreamPort)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
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
      // The server is not there: the client sees its connection reset, as it would directly.
      Self.reset(client)
      Glibc.close(client)
      Glibc.close(upstream)
      return
    }
    let recording = self.recordsClientBytes
    Thread.detachNewThread {
      self.pump(link: id, from: client, to: upstream, recording: recording, fromServer: false)
    }
    Thread.detachNewThread {
      self.pump(link: id, from: upstream, to: client, recording: false, fromServer: true)
    }
  }

  /// What a pump does with the chunk it just read.
  private enum ChunkAction {
    case forward(Int, then: Fault)
    /// Keep the chunk until the stall ends (or the link does).
    case hold
    case stop
  }

  private func pump(
    link id: Int,
    from source: Int32,
    to destination: Int32,
    recording: Bool,
    fromServer: Bool
  ) {
    var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
      let limit = self.state.withLock { $0.fault }.readLimit(buffer: buffer.count)
      let count = read(source, &buffer, limit)
      if recording, count > 0 {
        self.state.withLock { state in
          state.recordings[id, default: ClientRecording()].append(buffer[0 ..< count])
        }
      }
      var action = self.action(link: id, read: count)
      while case .hold = action {
        Thread.sleep(forTimeInterval: 0.005)
        action = self.action(link: id, read: count)
      }
      guard case .forward(let count, let fault) = action else { break }
      if case .delay(let delay) = fault.kind {
        Thread.sleep(forTimeInterval: delay / .seconds(1))
      }
      guard Self.write(buffer, count: count, to: destination) else { break }
      if fromServer {
        self.state.withLock { $0.serverBytes += count }
      }
      if case .bandwidth(let rate) = fault.kind {
        Thread.sleep(forTimeInterval: Double(count) / Double(rate))
      }
      if fault == .reset {
        // The cut came in this chunk: what came before it was delivered.
        self.state.withLock { Self.end(link: id, in: &$0) }
        break
      }
    }
    self.pumpStopped(link: id, destination: destination)
  }

  /// What to do with the `count` bytes a pump of link `id` just read, under the fault in force.
  private func action(link id: Int, read count: Int) -> ChunkAction {
    self.state.withLock { state in
      guard count > 0, let link = state.links[id], !link.ended else { return .stop }
      switch state.fault.kind {
      case .stall:
        return .hold
      case .reset:
        Self.end(link: id, in: &state)
        return .stop
      case .closeAfter(let bytes):
        let allowed = max(0, min(count, bytes - link.forwarded))
        state.links[id]?.forwarded += allowed
        return .forward(allowed, then: allowed < count ? .reset : .none)
      case .none, .delay, .bandwidth:
        state.links[id]?.forwarded += count
        return .forward(count, then: state.fault)
      }
    }
  }

  private static func write(_ buffer: [UInt8], count: Int, to destination: Int32) -> Bool {
    var sent = 0
    while sent < count {
      let written = buffer[sent ..< count].withUnsafeBytes {
        Glibc.write(destination, $0.baseAddress, count - sent)
      }
      guard written > 0 else { return false }
      sent += written
    }
    return true
  }

  /// The peer closed (or the link ended): pass the half-close on; the last pump closes both.
  private func pumpStopped(link id: Int, destination: Int32) {
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

/// The bytes one client connection sent through a recording ``FaultProxy``.
public struct ClientRecording: Sendable {
  public private(set) var bytes: [UInt8] = []
  /// Where each read of ``bytes`` ended: what one read got is, on loopback, what the client
  /// flushed at once (or part of it, never two flushes' worth when the reader keeps up).
  public private(set) var readEnds: [Int] = []

  public var frames: [RecordedHTTP2Frame] {
    RecordedHTTP2Frame.parse(clientBytes: self.bytes)
  }

  mutating func append(_ chunk: ArraySlice<UInt8>) {
    self.bytes += chunk
    self.readEnds.append(self.bytes.count)
  }
}
