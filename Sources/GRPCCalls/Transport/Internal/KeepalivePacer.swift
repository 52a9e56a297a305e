internal import Logging
internal import NIOCore
internal import NIOHTTP2

/// Decides which of the transport's keepalive PINGs leave, so that a channel keeps alive as
/// gRFC A8 says.
///
/// The transport's keepalive (grpc-swift-nio-transport 2.9, `ClientConnectionHandler`) stops
/// its timer when a connection's last stream closes and restarts it only on the server's
/// SETTINGS or the answer to its own PING, so a connection that once had no call open never
/// pings again: a dead peer under a later long stream went unnoticed. And it has no way to
/// back off when a server says it pings too often. So the transport is told to ping whether or
/// not calls are open, at the channel's interval, and this handler, between the HTTP/2 handler
/// and the transport's, lets a PING through only
/// - while a stream is open on the connection (``ConnectionRecord``), or always with
///   ``GRPCCallOptions/keepalivePermitWithoutCalls``;
/// - and one in every ``KeepaliveBackoff/multiplier``, which doubles each time a server ends a
///   connection of the channel with GOAWAY ENHANCE_YOUR_CALM "too_many_pings" (A8: the client
///   doubles its keepalive time).
///
/// A PING held back is answered here, on the next tick, with the ACK the transport waits for:
/// its timer then runs again, with nothing on the wire. The ACK comes as a read of its own, so
/// a read-complete follows it: the transport's handler holds back its flushes from a read until
/// the read completes, and without one it would hold back every later write to the
/// connection, the next keepalive PING among them, until the server happened to send
/// something (a quiet call would then end when that PING's timeout expired). Drop this
/// handler when the transport resumes keepalive on a new stream and backs off by itself.
final class KeepalivePacer: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTP2Frame
  typealias InboundOut = HTTP2Frame
  typealias OutboundIn = HTTP2Frame
  typealias OutboundOut = HTTP2Frame

  private let record: ConnectionRecord
  private let backoff: KeepaliveBackoff
  /// The transport's keepalive PINGs so far, sent or held back.
  private var pings = 0

  init(record: ConnectionRecord, backoff: KeepaliveBackoff) {
    self.record = record
    self.backoff = backoff
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    let frame = self.unwrapOutboundIn(data)
    guard case .ping(let payload, ack: false) = frame.payload else {
      context.write(data, promise: promise)
      return
    }
    self.pings += 1
    let idle = self.record.openStreams == 0 && !self.backoff.permitWithoutCalls
    if !idle, self.pings % self.backoff.multiplier == 0 {
      context.write(data, promise: promise)
      return
    }
    promise?.succeed()
    let answer = HTTP2Frame(streamID: .rootStream, payload: .ping(payload, ack: true))
    context.eventLoop.assumeIsolated().execute {
      context.fireChannelRead(self.wrapInboundOut(answer))
      context.fireChannelReadComplete()
    }
  }

  /// Adds a pacer just after the channel's HTTP/2 handler (before the transport's connection
  /// handler), sharing the connection's record.
  static func install(
    on channel: any Channel,
    record: ConnectionRecord,
    backoff: KeepaliveBackoff
  ) throws {
    let pipeline = channel.pipeline.syncOperations
    let http2 = try pipeline.handler(type: NIOHTTP2Handler.self)
    try pipeline.addHandler(Self(record: record, backoff: backoff), position: .after(http2))
  }
}

/// A channel's keepalive pacing, shared by its connections: whether to ping with no call open,
/// and how many of the transport's pings make one that leaves.
final class KeepaliveBackoff: Sendable {
  let permitWithoutCalls: Bool
  private let interval: Double
  private let logger: Logger
  private let state = LockedValue((multiplier: 1, logged: false))

  /// - Parameters:
  ///   - interval: The transport's keepalive interval, in seconds (for the log).
  init(permitWithoutCalls: Bool, interval: Double, logger: Logger) {
    self.permitWithoutCalls = permitWithoutCalls
    self.interval = interval
    self.logger = logger
  }

  /// One in how many of the transport's pings leaves.
  var multiplier: Int { self.state.withLock { $0.multiplier } }

  /// A server of the channel said it was pinged too often (GOAWAY ENHANCE_YOUR_CALM
  /// "too_many_pings"): the channel's keepalive time doubles, for its next connections too. The
  /// first time, it says so in the log.
  func serverSaidTooManyPings() {
    let (multiplier, firstTime) = self.state.withLock { state in
      state.multiplier = min(state.multiplier * 2, 1 << 20)
      defer { state.logged = true }
      return (state.multiplier, !state.logged)
    }
    guard firstTime else { return }
    self.logger.warning(
      "The server closed a connection for too many keepalive pings (GOAWAY ENHANCE_YOUR_CALM \"too_many_pings\"): the channel now pings every \(Double(multiplier) * self.interval) s; raise keepaliveInterval, or ask the server to permit more (grpc-go: keepalive.EnforcementPolicy)"
    )
  }

  /// Whether `goAway` is a server's complaint of too many pings.
  static func isTooManyPings(_ goAway: GoAwayRecorder.GoAway) -> Bool {
    goAway.errorCode == .enhanceYourCalm && goAway.debugData == "too_many_pings"
  }
}
