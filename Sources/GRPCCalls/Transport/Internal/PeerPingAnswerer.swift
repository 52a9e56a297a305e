internal import NIOCore
internal import NIOHTTP2

/// Answers the server's PING requests on a connection, before the HTTP/2 handler counts them.
///
/// swift-nio-http2 (1.46) treats more than 200 inbound PING, SETTINGS, PRIORITY, ALTSVC or
/// ORIGIN frames in 30 s as an attack: it sends GOAWAY ENHANCE_YOUR_CALM and closes the
/// connection with every call on it (`NIOHTTP2Handler.ConnectionConfiguration`'s
/// `controlFrameRateLimit`, checked in `DOSHeuristics`). grpc-go's servers estimate the
/// bandwidth-delay product with a PING for nearly every burst of DATA they receive, so a client
/// making calls at any pace crosses that limit within seconds. grpc-swift-nio-transport (2.9)
/// builds the HTTP/2 handler's configuration itself and offers no way to change it.
///
/// So this handler sits just before the HTTP/2 handler (after TLS), takes each PING request out
/// of the server's bytes (``PeerPingFilter``) and writes its ACK itself, which is all the HTTP/2
/// handler would have done with it; every other frame, PING ACKs for the transport's keepalive
/// among them, passes on unchanged. gRPC's own clients (grpc-go, gRPC core) answer every PING a
/// server sends. The ACKs of one read leave in one flush at the end of the read. Its frames are
/// written between the HTTP/2 handler's, never inside one: the HTTP/2 handler writes each frame
/// (a DATA frame's header and payload) in one synchronous step, and this handler writes only
/// while handling a read.
///
/// Drop it once the transport lets a client set `controlFrameRateLimit`.
final class PeerPingAnswerer: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  typealias InboundOut = ByteBuffer
  typealias OutboundOut = ByteBuffer

  private var filter = PeerPingFilter()
  private var answered = false

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let output = self.filter.process(self.unwrapInboundIn(data))
    for pass in output.pass {
      context.fireChannelRead(self.wrapInboundOut(pass))
    }
    for payload in output.pings {
      let ack = PeerPingFilter.acknowledgement(of: payload, allocator: context.channel.allocator)
      context.write(self.wrapOutboundOut(ack), promise: nil)
      self.answered = true
    }
  }

  func channelReadComplete(context: ChannelHandlerContext) {
    if self.answered {
      self.answered = false
      context.flush()
    }
    context.fireChannelReadComplete()
  }

  /// Adds the answerer just before the channel's HTTP/2 handler.
  static func install(on channel: any Channel) throws {
    let pipeline = channel.pipeline.syncOperations
    let http2 = try pipeline.handler(type: NIOHTTP2Handler.self)
    try pipeline.addHandler(Self(), position: .before(http2))
  }
}
