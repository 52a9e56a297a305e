internal import NIOCore
internal import NIOHTTP2

/// Remembers the last GOAWAY the server sent on a connection, so that the calls it ended can be
/// told what happened (``StreamEndInterpreter``), and the server's concurrency limit, which
/// streams wait for.
///
/// It sits just after the HTTP/2 handler, where connection-level frames arrive parsed, and
/// passes every frame on. grpc-go's graceful GOAWAY comes in two steps (gRPC's HTTP/2 protocol):
/// first with the largest stream ID, then with the last stream it really took; the second one
/// is the one kept. The recorder is read and written on the connection's event loop only.
final class GoAwayRecorder: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = HTTP2Frame
  typealias InboundOut = HTTP2Frame

  /// A GOAWAY as received.
  struct GoAway {
    var lastStreamID: HTTP2StreamID
    var errorCode: HTTP2ErrorCode
    /// The server's debug data, as text (grpc-go says "too_many_pings", "max_age"…).
    var debugData: String
    /// Whether it is the connection's first GOAWAY (grpc-go sends two).
    var isFirst = true
    /// Whether calls were using the connection when it came (not an idle connection's GOAWAY).
    var hadStreams = false
  }

  /// Where the GOAWAY is kept, for the connection's streams.
  let record: ConnectionRecord
  /// Told of each GOAWAY, on the connection's event loop.
  private let onGoAway: (@Sendable (GoAway) -> Void)?
  /// Told once the server's first SETTINGS came, on the connection's event loop.
  private let onEstablished: (@Sendable () -> Void)?

  init(
    record: ConnectionRecord,
    onGoAway: (@Sendable (GoAway) -> Void)? = nil,
    onEstablished: (@Sendable () -> Void)? = nil
  ) {
    self.record = record
    self.onGoAway = onGoAway
    self.onEstablished = onEstablished
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    if case .goAway(let lastStreamID, let errorCode, let opaqueData) = self.unwrapInboundIn(data)
      .payload
    {
      let goAway = GoAway(
        lastStreamID: lastStreamID,
        errorCode: errorCode,
        debugData: opaqueData.map { String(buffer: $0) } ?? "",
        isFirst: self.record.lastGoAway == nil,
        hadStreams: self.record.hasStreams
      )
      self.record.lastGoAway = goAway
      // Streams waiting for a slot will never get one on this connection.
      self.record.refuseWaiting()
      self.onGoAway?(goAway)
    } else if case .settings(.settings(let settings)) = self.unwrapInboundIn(data).payload {
      if !self.record.established {
        self.record.established = true
        if let address = context.channel.remoteAddress, let host = address.ipAddress,
          let port = address.port
        {
          self.record.server = ServerAddress(host: host, port: port)
        }
        self.onEstablished?()
      }
      if let limit = settings.last(where: { $0.parameter == .maxConcurrentStreams }) {
        self.record.maxConcurrentStreams = limit.value
        self.record.scheduleAdmission(on: context.eventLoop)
      }
    }
    context.fireChannelRead(data)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    // The transport closes the connection on any error here; the calls it ends learn why.
    if self.record.connectionError == nil {
      self.record.connectionError = error
    }
    context.fireErrorCaught(error)
  }

  /// Adds a recorder just after the channel's HTTP/2 handler, and a ``SentStreamsTracker`` just
  /// before it, sharing one ``ConnectionRecord``, which it returns.
  @discardableResult
  static func install(
    on channel: any Channel,
    onGoAway: (@Sendable (GoAway) -> Void)?,
    onEstablished: (@Sendable () -> Void)? = nil
  ) throws -> ConnectionRecord {
    let pipeline = channel.pipeline.syncOperations
    let http2 = try pipeline.handler(type: NIOHTTP2Handler.self)
    let record = ConnectionRecord()
    try pipeline.addHandler(SentStreamsTracker(record: record), position: .before(http2))
    try pipeline.addHandler(
      Self(record: record, onGoAway: onGoAway, onEstablished: onEstablished),
      position: .after(http2)
    )
    return record
  }
}

extension GoAwayRecorder.GoAway: Sendable {}

extension HTTP2ErrorCode {
  /// The code's name in RFC 9113 §7.
  var name: String {
    switch self {
    case .noError: "NO_ERROR"
    case .protocolError: "PROTOCOL_ERROR"
    case .internalError: "INTERNAL_ERROR"
    case .flowControlError: "FLOW_CONTROL_ERROR"
    case .settingsTimeout: "SETTINGS_TIMEOUT"
    case .streamClosed: "STREAM_CLOSED"
    case .frameSizeError: "FRAME_SIZE_ERROR"
    case .refusedStream: "REFUSED_STREAM"
    case .cancel: "CANCEL"
    case .compressionError: "COMPRESSION_ERROR"
    case .connectError: "CONNECT_ERROR"
    case .enhanceYourCalm: "ENHANCE_YOUR_CALM"
    case .inadequateSecurity: "INADEQUATE_SECURITY"
    case .http11Required: "HTTP_1_1_REQUIRED"
    default: "0x\(String(self.networkCode, radix: 16))"
    }
  }
}
