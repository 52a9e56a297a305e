internal import NIOCore
internal import NIOHPACK
internal import NIOHTTP2

/// Tells a call whose stream ended without a word from the server what happened to it, where
/// the transport would only report "Stream unexpectedly closed", keeps new streams off a
/// connection that is closing, and holds them back while the server's concurrency limit is
/// reached.
///
/// It sits first in each stream's pipeline, before the transport's stream handler, and reads
/// what its connection's handlers learnt (``ConnectionRecord``):
/// - a stream that would open on a connection either side has begun to close (a GOAWAY) is held
///   back at its first flush, before anything leaves;
/// - one that would open past the server's SETTINGS_MAX_CONCURRENT_STREAMS waits here for a
///   slot, in order, instead of in swift-nio-http2's buffer (which fails the whole connection
///   when it releases a stream onto a closing one), and is refused if a GOAWAY comes first;
/// - when a stream ends (an error, or going inactive) before any frame from the server reached
///   it, and its HEADERS never left the client (held back here, or waiting in
///   swift-nio-http2's buffer for a concurrency slot when the connection closed), the call gets
///   UNAVAILABLE ``neverLeftMessage`` (``neverLeftReset`` if it wrote nothing yet), which the
///   runner retries on another connection (gRFC A6: an RPC that never left the client);
/// - one above the last stream ID of the server's GOAWAY was not processed by the server (RFC
///   9113 §6.8): it gets UNAVAILABLE ``unprocessedPrefix``, which the runner treats as a
///   REFUSED_STREAM reset, what a server says of a stream it did no work on: the call is
///   retried once, as gRPC core and grpc-go do;
/// - any other stream whose connection ended under it, before or after the server's response
///   headers, gets UNAVAILABLE saying which side closed the connection and why: the GOAWAY's
///   error code and debug data (ENHANCE_YOUR_CALM "too_many_pings", say) and what to do about
///   it, or the connection's error. It is not retried: the server may have done its work.
final class StreamEndInterpreter: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = HTTP2Frame.FramePayload
  typealias InboundOut = HTTP2Frame.FramePayload
  typealias OutboundIn = HTTP2Frame.FramePayload
  typealias OutboundOut = HTTP2Frame.FramePayload

  /// What the stream's connection learnt; touched on the connection's event loop only, which
  /// the stream shares.
  private let connection: ConnectionRecord
  /// Whether the server's response headers reached the stream (its WINDOW_UPDATEs do not count:
  /// the transport still waits for the headers).
  private var answered = false
  /// Whether the server ended the stream itself (END_STREAM or RST_STREAM): the transport then
  /// knows how the call ended.
  private var endedByServer = false
  /// Whether the client closed the stream (a cancelled call, or one the transport finished).
  private var closedByClient = false
  private var explained = false
  private var passage = Passage.holding
  /// Whether the stream wrote anything (its request headers come first) before it started.
  private var wrote = false
  /// The stream's context while it waits for a slot.
  private var waitingContext: ChannelHandlerContext?

  /// Where the stream is on its way to the HTTP/2 handler.
  ///
  /// Until it starts, its writes wait in its own channel, unflushed: there they count against
  /// the channel's writability, so a call that keeps writing while it waits for a slot is held
  /// back by the transport's writer instead of buffering without bound. Its flushes stop here,
  /// and nothing leaves (nor gets a stream ID) until it starts.
  private enum Passage {
    /// Its flushes are held until its first one.
    case holding
    /// It flushed while the server's concurrency limit was reached, and waits for a slot.
    case waitingForSlot
    /// Its frames go on to the HTTP/2 handler.
    case started
    /// It was refused before it left, its connection having begun to close: what it wrote
    /// stays unflushed until its channel closes and fails it.
    case refused
    /// Its channel went inactive: writes go on to the channel, which fails them.
    case closed
  }

  init(connection: ConnectionRecord) {
    self.connection = connection
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    switch self.unwrapInboundIn(data) {
    case .headers(let headers):
      self.answered = true
      self.endedByServer = self.endedByServer || headers.endStream
    case .data(let data):
      self.endedByServer = self.endedByServer || data.endStream
    case .rstStream(let code):
      self.endedByServer = true
      if code == Self.neverLeftReset {
        // A peer's reset of that code (none of RFC 9113's, so INTERNAL_ERROR to a receiver)
        // must not read as a stream that never left: the server may have done the work.
        context.fireChannelRead(self.wrapInboundOut(.rstStream(.internalError)))
        return
      }
    default:
      break
    }
    context.fireChannelRead(data)
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    switch self.passage {
    case .refused: promise?.succeed()
    case .started, .closed: context.write(data, promise: promise)
    case .holding, .waitingForSlot:
      self.wrote = true
      context.write(data, promise: promise)
    }
  }

  func flush(context: ChannelHandlerContext) {
    switch self.passage {
    case .started, .closed:
      context.flush()
    case .waitingForSlot, .refused:
      break
    case .holding:
      // No stream opens on a connection either side has begun to close (RFC 9113 §6.8: a
      // receiver of GOAWAY opens no more); the transport learns of a GOAWAY a moment after it
      // arrives and may still open some, and swift-nio-http2 fails the whole connection when
      // one does after its last stream closed. The stream's frames reach the HTTP/2 handler
      // when the stream first flushes, so that is when it is refused, before anything leaves,
      // to run on a new connection.
      //
      // Nor does one open past the server's concurrency limit: swift-nio-http2 would hold its
      // HEADERS in a buffer of its own that knows nothing of GOAWAY and, when it releases them
      // onto a closing connection, fails the whole connection. Here it waits for a slot, and is
      // refused if the connection begins to close first.
      if self.connection.isClosing {
        self.refuse(context: context)
      } else if self.connection.takeSlot() {
        self.start(context: context)
      } else {
        self.passage = .waitingForSlot
        self.waitingContext = context
        self.connection.wait(self)
      }
    }
  }

  /// A slot came free for this waiting stream (``ConnectionRecord``).
  func admit() {
    guard case .waitingForSlot = self.passage, let context = self.waitingContext else { return }
    self.waitingContext = nil
    self.start(context: context)
  }

  /// The connection began to close while this stream waited for a slot (``ConnectionRecord``).
  func refuse() {
    guard case .waitingForSlot = self.passage, let context = self.waitingContext else { return }
    self.waitingContext = nil
    self.refuse(context: context)
  }

  private func start(context: ChannelHandlerContext) {
    self.passage = .started
    context.flush()
  }

  private func refuse(context: ChannelHandlerContext) {
    self.passage = .refused
    self.explained = true
    self.report(Self.neverLeftMessage, wroteHeaders: self.wrote, context: context)
    // The stream has no ID, so no read of the connection's completes here: the transport's
    // stream handler holds back what it reads (and its flushes) until a read completes.
    context.fireChannelReadComplete()
  }

  func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
    if mode == .all {
      self.closedByClient = true
    }
    context.close(mode: mode, promise: promise)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    // swift-nio-http2 closes the streams above a GOAWAY's last stream ID with this error,
    // before the GOAWAY frame itself reaches the recorder; a reset from the peer comes as a
    // frame first.
    let droppedByGoAway = (error as? NIOHTTP2Errors.StreamClosed)?.errorCode == .cancel
    self.explainEnd(context: context, droppedByGoAway: droppedByGoAway)
    context.fireErrorCaught(error)
  }

  func channelInactive(context: ChannelHandlerContext) {
    switch self.passage {
    case .started:
      self.connection.releaseSlot(on: context.eventLoop)
    case .waitingForSlot:
      self.connection.stopWaiting(self)
      self.waitingContext = nil
    case .holding, .refused, .closed:
      break
    }
    self.explainEnd(context: context)
    self.passage = .closed
    context.fireChannelInactive()
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    if case .waitingForSlot = self.passage {
      self.connection.stopWaiting(self)
      self.waitingContext = nil
    }
  }

  private func explainEnd(context: ChannelHandlerContext, droppedByGoAway: Bool = false) {
    guard !self.explained, !self.endedByServer else { return }
    if self.answered {
      // The server answered, then the stream ended without its status: the connection closed
      // under it. The server may have done the call's work, so it is not retried.
      guard !self.closedByClient else { return }
      self.explained = true
      self.reportStatus(self.connectionEndMessage, trailersOnly: false, context: context)
      return
    }
    self.explained = true
    switch self.passage {
    case .holding, .waitingForSlot:
      // The stream ended before it first flushed, or while it waited for a slot: the
      // connection closed under it (the server's GOAWAY, or the transport closing a connection
      // it no longer uses, which waits only for the streams swift-nio-http2 has opened).
      self.report(Self.neverLeftMessage, wroteHeaders: self.wrote, context: context)
      return
    case .started, .refused, .closed:
      // Its HEADERS went on to the HTTP/2 handler (or its end was explained when its channel
      // went inactive).
      break
    }
    let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
    if self.connection.lastGoAway != nil, self.connection.neverSent(streamID: streamID) {
      // Only a connection the server was closing: a stream whose HEADERS swift-nio-http2 would
      // not send at all (a header list over the server's limit, which it treats as a
      // connection error) keeps the transport's error, since it would fail the same way again.
      self.reportStatus(Self.neverLeftMessage, context: context)
    } else if self.connection.aboveGoAway(streamID: streamID, droppedByGoAway: droppedByGoAway) {
      self.reportStatus(Self.unprocessedMessage(for: self.connection.lastGoAway), context: context)
    } else if let mismatch = self.connection.connectionError as? CertificateNameMismatch {
      // The connection was refused before any call on it left: the server did not prove the
      // name it was asked for.
      self.reportStatus(mismatch.message, context: context)
    } else if !self.closedByClient, self.connection.isClosing {
      self.reportStatus(self.connectionEndMessage, context: context)
    }
  }

  /// Why the stream's connection ended under it, for a call that may have reached the server.
  private var connectionEndMessage: String {
    if let goAway = self.connection.lastGoAway {
      return Self.message(for: goAway)
    }
    if let error = self.connection.connectionError {
      return "\(Self.connectionFailedPrefix): \(Self.describe(error))"
    }
    if CoreFailure.isKeepaliveExpiry(goAwayDebugData: self.connection.sentGoAwayDebugData) {
      return Self.keepaliveExpiredMessage
    }
    if self.connection.sentGoAway || self.connection.closedByClient {
      return Self.clientClosedMessage
    }
    return "\(Self.serverClosedPrefix)without a GOAWAY) before the call completed"
  }

  /// How the message of a call whose connection failed under it starts (it goes on with the
  /// error).
  static let connectionFailedPrefix = "The connection failed before the call completed"

  /// The message of a call whose connection the client closed under it.
  static let clientClosedMessage = "The client closed the connection before the call completed"

  /// The message of a call whose connection the client closed under it because the server did
  /// not answer a keepalive ping in time.
  static let keepaliveExpiredMessage = """
    The server did not answer a keepalive ping within keepaliveTimeout, so the client closed \
    the connection before the call completed (the server or the network stalled)
    """

  /// How the message of a call whose connection the server closed under it starts (it goes on
  /// with the GOAWAY, or its absence).
  static let serverClosedPrefix = "The server closed the connection ("

  /// Whether `message` is one this handler gives a call (not a status the server sent).
  static func isOwnMessage(_ message: String) -> Bool {
    message == Self.neverLeftMessage || message == Self.clientClosedMessage
      || message == Self.keepaliveExpiredMessage
      || [Self.unprocessedPrefix, Self.connectionFailedPrefix, Self.serverClosedPrefix].contains {
        message.hasPrefix($0)
      }
  }

  /// `error` as text, without the source location some of swift-nio-http2's errors print.
  private static func describe(_ error: any Error) -> String {
    let text = String(describing: error)
    guard let location = text.firstRange(of: "(file: ") else { return text }
    return String(text[..<location.lowerBound])
  }

  /// Ends a call that the server did not process with UNAVAILABLE `message`, which the runner
  /// recognizes and retries (``neverLeftMessage``, ``unprocessedPrefix``). A stream that wrote
  /// nothing yet is answered with a ``neverLeftReset`` instead: the transport takes no status
  /// before the request's headers.
  private func report(_ message: String, wroteHeaders: Bool, context: ChannelHandlerContext) {
    if wroteHeaders {
      self.reportStatus(message, context: context)
    } else {
      context.fireChannelRead(self.wrapInboundOut(.rstStream(Self.neverLeftReset)))
    }
  }

  /// The reset handed to the transport for a stream that ended before it wrote anything, so
  /// before anything of it left the client.
  ///
  /// Not REFUSED_STREAM: that says the server saw the stream and did no work on it, which gRFC
  /// A6 (like gRPC core and grpc-go) retries once per call, while a call whose stream never
  /// left is tried again as often as its connection closes under it; a call with 200 in flight
  /// against a server that ends each connection after a second met that twice in a row. The
  /// code is none of RFC 9113's (0x0 to 0xd) and never goes on the wire: ``StreamReset`` turns
  /// it back into ``neverLeftMessage``, and a peer's reset of that code reaches the transport
  /// as INTERNAL_ERROR.
  static let neverLeftReset = HTTP2ErrorCode(networkCode: 0x4E4C)

  /// Hands the transport UNAVAILABLE with `message`: a trailers-only answer, or trailers after
  /// the server's own headers.
  private func reportStatus(
    _ message: String,
    trailersOnly: Bool = true,
    context: ChannelHandlerContext
  ) {
    var trailers = HPACKHeaders()
    if trailersOnly {
      trailers.add(name: ":status", value: "200")
      trailers.add(name: "content-type", value: "application/grpc")
    }
    trailers.add(name: "grpc-status", value: "14")
    trailers.add(name: "grpc-message", value: message)
    context.fireChannelRead(
      self.wrapInboundOut(.headers(.init(headers: trailers, endStream: true)))
    )
  }

  /// The status message of a call whose stream never left the client (its HEADERS were held
  /// back from, or never reached, a connection that was closing); the runner retries such a
  /// call on another connection (gRFC A6).
  static let neverLeftMessage =
    "The call's stream did not leave the client: its connection was closing"

  /// How the message of a call the server did not process starts (it goes on with the GOAWAY).
  static let unprocessedPrefix = "The server did not process the call"

  /// The message of a call above the last stream ID of `goAway` (`nil`: not read yet).
  static func unprocessedMessage(for goAway: GoAwayRecorder.GoAway?) -> String {
    "\(Self.unprocessedPrefix): it closed the connection (\(goAway.map(Self.describe) ?? "GOAWAY")) before this call's stream"
  }

  /// `GOAWAY CODE "debug data"`, in plain ASCII without `%`, so that it needs no
  /// percent-encoding as part of a `grpc-message`.
  static func describe(_ goAway: GoAwayRecorder.GoAway) -> String {
    let data = goAway.debugData.unicodeScalars.filter {
      $0.isASCII && $0 != "%" && $0.value >= 0x20
    }
    return "GOAWAY \(goAway.errorCode.name)"
      + (data.isEmpty ? "" : " \"\(String(String.UnicodeScalarView(data)))\"")
  }

  /// What the call's error says.
  static func message(for goAway: GoAwayRecorder.GoAway) -> String {
    var message = "\(Self.serverClosedPrefix)\(Self.describe(goAway))) before the call completed"
    if goAway.errorCode == .enhanceYourCalm, goAway.debugData == "too_many_pings" {
      message +=
        ": it allows fewer keepalive pings; raise keepaliveInterval, or ask the server to permit more (grpc-go: keepalive.EnforcementPolicy)"
    }
    return message
  }

  /// Adds an interpreter first in a new stream's pipeline, if its connection has a recorder.
  static func install(on stream: any Channel) throws {
    guard let parent = stream.parent,
      let recorder = try? parent.pipeline.syncOperations.handler(type: GoAwayRecorder.self)
    else { return }
    try stream.pipeline.syncOperations.addHandler(
      Self(connection: recorder.record),
      position: .first
    )
  }
}
