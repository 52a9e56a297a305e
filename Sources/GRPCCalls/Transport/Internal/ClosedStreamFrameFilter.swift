internal import NIOCore
internal import NIOHTTP2

/// Keeps a frame meant for a stream that has already closed from closing the connection under
/// every other call on it.
///
/// swift-nio-http2 holds a stream's outbound control frames back while the connection is not
/// writable, and checks them against the stream's state only when it lets them go. A stream
/// that opens before the server acknowledged the client's SETTINGS writes a WINDOW_UPDATE as it
/// opens, to raise its window to the transport's target; held while the socket is full, and let
/// go after the server answered and ended the stream, it is refused with `NoSuchStream`, raised
/// as an error on the connection. grpc-swift-nio-transport closes the connection on any such
/// error, and every call on it fails. The frame mattered to no one: its stream is gone.
///
/// So this handler, after the HTTP/2 handler and before the transport's connection handler,
/// lets `NoSuchStream` go, unless it was raised while the HTTP/2 handler handled bytes from the
/// server (``SentStreamsTracker`` marks when): a server that sent a frame on a stream already
/// closed broke the protocol, swift-nio-http2 answered with a GOAWAY and stopped reading, and
/// the connection must close. That error passes on, and so does any other. The HTTP/2 handler
/// lets held frames go on a flush, at the end of a read, or when the connection becomes
/// writable: rarely while it handles a read (a flush of its own there may find the connection
/// writable again), and a refusal then closes the connection as it would without this filter.
/// grpc/grpc-swift#1544 describes the WINDOW_UPDATE case in grpc-swift 1.x.
///
/// Drop it when the transport no longer closes a connection for a frame refused to one stream.
final class ClosedStreamFrameFilter: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = HTTP2Frame
  typealias InboundOut = HTTP2Frame

  private let record: ConnectionRecord

  init(record: ConnectionRecord) {
    self.record = record
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    if error is NIOHTTP2Errors.NoSuchStream, !self.record.isReadingFromServer {
      return
    }
    context.fireErrorCaught(error)
  }

  /// Adds the filter after the channel's HTTP/2 handler; `record` is the connection's,
  /// marked by its ``SentStreamsTracker``.
  static func install(on channel: any Channel, record: ConnectionRecord) throws {
    let pipeline = channel.pipeline.syncOperations
    let http2 = try pipeline.handler(type: NIOHTTP2Handler.self)
    try pipeline.addHandler(Self(record: record), position: .after(http2))
  }
}
