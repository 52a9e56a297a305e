internal import NIOCore
internal import NIOSSL

/// Recognizes a peer that answers a new connection in HTTP/1 instead of with HTTP/2 settings,
/// so that the call's error can quote what it said (``HTTP1Answer``) rather than report a
/// connection that closed before the HTTP/2 preface.
///
/// It reads the connection's first bytes (after TLS, when there is TLS) and then leaves the
/// pipeline: an HTTP/2 connection pays for one look at its first read.
final class HTTP1AnswerDetector: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    if let line = Self.statusLine(in: self.unwrapInboundIn(data)) {
      context.fireErrorCaught(HTTP1Answer(statusLine: line))
      context.close(promise: nil)
      return
    }
    context.fireChannelRead(data)
    context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
  }

  /// The first line of `buffer` when it starts an HTTP/1 response, at most 120 characters.
  static func statusLine(in buffer: ByteBuffer) -> String? {
    let prefix = Array("HTTP/1.".utf8)
    guard
      let head = buffer.getBytes(at: buffer.readerIndex, length: min(buffer.readableBytes, 120)),
      head.starts(with: prefix)
    else { return nil }
    let line = head.prefix { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") }
    return String(decoding: line, as: UTF8.self)
  }

  /// Adds the detector after the channel's TLS handler, or first when there is none.
  static func install(on channel: any Channel) throws {
    let pipeline = channel.pipeline.syncOperations
    if let tls = try? pipeline.handler(type: NIOSSLClientHandler.self) {
      try pipeline.addHandler(Self(), position: .after(tls))
    } else {
      try pipeline.addHandler(Self(), position: .first)
    }
  }
}
