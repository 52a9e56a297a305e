internal import NIOCore
internal import NIOHTTP2

/// Keeps a frame meant for a stream that has already closed from closing the connection under
/// every other call on it.
///
/// swift-nio-http2 holds a stream's outbound control frames back while the connection is not
/// writable, and checks them against the stream's state only when it lets them go. A
/// WINDOW_UPDATE that a stream wrote just before the server ended it is then refused with
/// `NoSuchStream`, raised as an error on the connection; a stream that opened before the
/// server acknowledged the client's window settings writes one with its first response bytes,
/// so a connection that starts under many calls meets this. grpc-swift-nio-transport closes
/// the connection on any such error, and every call on it fails. The frame mattered to no one:
/// its stream is gone. A frame for a stream the HTTP/2 handler does not know, which it drops,
/// raises the same error.
///
/// So this handler, just after the HTTP/2 handler, lets `NoSuchStream` go, unless the HTTP/2
/// handler answered it with a GOAWAY: a server that sent a frame on a stream already closed
/// broke the protocol, swift-nio-http2 wrote a GOAWAY just before raising the error (the last
/// frame ``SentStreamsTracker`` saw) and stopped reading, and the connection must close. That
/// error passes on. grpc/grpc-swift#1544 describes the WINDOW_UPDATE case in grpc-swift 1.x.
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
    if error is NIOHTTP2Errors.NoSuchStream, !self.record.lastWrittenWasGoAway {
      return
    }
    context.fireErrorCaught(error)
  }

  /// Adds the filter just after the channel's HTTP/2 handler; `record` is the connection's,
  /// written by its ``SentStreamsTracker``.
  static func install(on channel: any Channel, record: ConnectionRecord) throws {
    let pipeline = channel.pipeline.syncOperations
    let http2 = try pipeline.handler(type: NIOHTTP2Handler.self)
    try pipeline.addHandler(Self(record: record), position: .after(http2))
  }
}
