import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix

/// A server on 127.0.0.1 that is not a gRPC server: an HTTP/1.1 server, or an HTTP/2 server
/// that answers every request with a fixed status, content type and body (a web server or a
/// proxy's error page where the client expected gRPC).
final class NotGRPCServer: Sendable {
  enum Answer: Sendable {
    /// An HTTP/1.1 response, whatever the client sent, then the connection closes.
    case http1(statusLine: String)
    /// An HTTP/2 response on every stream: `:status`, `content-type` and a body.
    case http2(status: Int, contentType: String, body: String)
  }

  let port: Int
  private let channel: any Channel

  private init(port: Int, channel: any Channel) {
    self.port = port
    self.channel = channel
  }

  static func start(answering answer: Answer) async throws -> NotGRPCServer {
    let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          switch answer {
          case .http1(let statusLine):
            try channel.pipeline.syncOperations.addHandler(HTTP1Answer(statusLine: statusLine))
          case .http2(let status, let contentType, let body):
            _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
              mode: .server,
              connectionConfiguration: .init(),
              streamConfiguration: .init()
            ) { stream in
              stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(
                  HTTP2Answer(status: status, contentType: contentType, body: body)
                )
              }
            }
          }
        }
      }
    let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
    return NotGRPCServer(port: channel.localAddress?.port ?? 0, channel: channel)
  }

  var target: String { "127.0.0.1:\(self.port)" }

  func stop() async {
    try? await self.channel.close()
  }
}

/// Answers the first bytes of a connection with an HTTP/1.1 response and closes it.
private final class HTTP1Answer: ChannelInboundHandler, Sendable {
  typealias InboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer

  let statusLine: String

  init(statusLine: String) {
    self.statusLine = statusLine
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let body = "not a gRPC server\n"
    let response =
      "\(self.statusLine)\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
      + "Connection: close\r\n\r\n\(body)"
    let close = context.eventLoop.makePromise(of: Void.self)
    context.writeAndFlush(self.wrapOutboundOut(ByteBuffer(string: response)), promise: close)
    let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
    close.futureResult.whenComplete { _ in bound.value.close(promise: nil) }
  }
}

/// Answers a stream's request headers with a fixed response, once.
private final class HTTP2Answer: ChannelInboundHandler {
  typealias InboundIn = NIOHTTP2.HTTP2Frame.FramePayload
  typealias OutboundOut = NIOHTTP2.HTTP2Frame.FramePayload

  let status: Int
  let contentType: String
  let body: String
  private var answered = false

  init(status: Int, contentType: String, body: String) {
    self.status = status
    self.contentType = contentType
    self.body = body
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard case .headers = self.unwrapInboundIn(data), !self.answered else { return }
    self.answered = true
    let headers: HPACKHeaders = [":status": "\(self.status)", "content-type": self.contentType]
    context.write(self.wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
    let data = NIOHTTP2.HTTP2Frame.FramePayload.Data(data: .byteBuffer(ByteBuffer(string: self.body)), endStream: true)
    context.writeAndFlush(self.wrapOutboundOut(.data(data)), promise: nil)
  }
}
