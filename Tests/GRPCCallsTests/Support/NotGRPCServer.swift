import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import Testing

/// A server on 127.0.0.1 that is not a gRPC server: an HTTP/1.1 server, or an HTTP/2 server
/// that answers every request with a fixed status, content type and body (a web server or a
/// proxy's error page where the client expected gRPC).
final class NotGRPCServer: Sendable {
  enum Answer: Sendable {
    /// An HTTP/1.1 response, whatever the client sent, then the connection closes.
    case http1(statusLine: String)
    /// An HTTP/2 response on every stream: `:status`, `content-type` and a body.
    case http2(status: Int, contentType: String, body: String)
    /// RST_STREAM(REFUSED_STREAM) to the first `count` streams, then a gRPC answer: an empty
    /// message and status OK.
    case refuseThenAnswer(count: Int)
    /// Like `refuseThenAnswer`, but each refusal comes with the stream's first request message,
    /// once the client has sent some of its requests.
    case refuseAtFirstMessageThenAnswer(count: Int)
    /// At a stream's request headers, GOAWAY with `code` and `debugData` naming that stream as
    /// the last one processed, then the connection closes without an answer.
    case goAway(code: HTTP2ErrorCode, debugData: String)
  }

  /// The request bytes (DATA payloads) of the streams answered, in order.
  var answeredRequestBytes: [Int] { self.counter.answered.withLock { $0 } }

  /// How many streams were opened, over every connection.
  var streams: Int { self.counter.value.withLock { $0 } }
  private let counter: StreamCounter

  let port: Int
  private let channel: any Channel

  fileprivate init(port: Int, channel: any Channel, counter: StreamCounter) {
    self.port = port
    self.channel = channel
    self.counter = counter
  }

  static func start(answering answer: Answer) async throws -> NotGRPCServer {
    let counter = StreamCounter()
    let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          switch answer {
          case .http1(let statusLine):
            try channel.pipeline.syncOperations.addHandler(HTTP1Answer(statusLine: statusLine))
          case .http2(let status, let contentType, let body):
            try Self.serveHTTP2(on: channel, counter: counter) { _ in
              HTTP2Answer(status: status, contentType: contentType, body: body)
            }
          case .refuseThenAnswer(let refusals):
            try Self.serveHTTP2(on: channel, counter: counter) { index in
              RefuseOrAnswer(refuse: index < refusals, counter: counter)
            }
          case .goAway(let code, let debugData):
            try Self.serveHTTP2(on: channel, counter: counter) { _ in
              GoAwayAnswer(code: code, debugData: debugData)
            }
          case .refuseAtFirstMessageThenAnswer(let refusals):
            try Self.serveHTTP2(on: channel, counter: counter) { index in
              RefuseOrAnswer(refuse: index < refusals, atFirstMessage: true, counter: counter)
            }
          }
        }
      }
    let channel = try await bootstrap.bind(host: "127.0.0.1", port: 0).get()
    return NotGRPCServer(port: channel.localAddress?.port ?? 0, channel: channel, counter: counter)
  }

  /// Makes `channel` an HTTP/2 server whose every stream gets the handler `answer` makes for
  /// the stream's index (counted over every connection).
  private static func serveHTTP2(
    on channel: any Channel,
    counter: StreamCounter,
    answer: @escaping @Sendable (Int) -> any ChannelHandler
  ) throws {
    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
      mode: .server,
      connectionConfiguration: .init(),
      streamConfiguration: .init()
    ) { stream in
      stream.eventLoop.makeCompletedFuture {
        try stream.pipeline.syncOperations.addHandler(answer(counter.count()))
      }
    }
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
    let data = NIOHTTP2.HTTP2Frame.FramePayload.Data(
      data: .byteBuffer(ByteBuffer(string: self.body)),
      endStream: true
    )
    context.writeAndFlush(self.wrapOutboundOut(.data(data)), promise: nil)
  }
}

/// Answers a stream's request headers with a GOAWAY on its connection, then closes it.
private final class GoAwayAnswer: ChannelInboundHandler {
  typealias InboundIn = NIOHTTP2.HTTP2Frame.FramePayload

  let code: HTTP2ErrorCode
  let debugData: String

  init(code: HTTP2ErrorCode, debugData: String) {
    self.code = code
    self.debugData = debugData
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard case .headers = self.unwrapInboundIn(data), let parent = context.channel.parent,
      let streamID = try? context.channel.syncOptions?.getOption(HTTP2StreamChannelOptions.streamID)
    else { return }
    let goAway = HTTP2Frame(
      streamID: .rootStream,
      payload: .goAway(
        lastStreamID: streamID,
        errorCode: self.code,
        opaqueData: ByteBuffer(string: self.debugData)
      )
    )
    parent.writeAndFlush(goAway).whenComplete { _ in parent.close(promise: nil) }
  }
}

/// Counts streams across connections; returns each stream's index.
private final class StreamCounter: Sendable {
  let value = LockedValue(0)
  /// The request bytes of each answered stream.
  let answered = LockedValue<[Int]>([])

  @discardableResult
  func count() -> Int {
    self.value.withLock { count in
      defer { count += 1 }
      return count
    }
  }
}

/// Refuses its stream (RST_STREAM REFUSED_STREAM), or answers as a gRPC server would: an empty
/// message and status OK.
private final class RefuseOrAnswer: ChannelInboundHandler {
  typealias InboundIn = NIOHTTP2.HTTP2Frame.FramePayload
  typealias OutboundOut = NIOHTTP2.HTTP2Frame.FramePayload

  let refuse: Bool
  /// Whether a refusal waits for the first request message.
  let atFirstMessage: Bool
  private let counter: StreamCounter
  private var answered = false
  private var requestBytes = 0

  init(refuse: Bool, atFirstMessage: Bool = false, counter: StreamCounter) {
    self.refuse = refuse
    self.atFirstMessage = atFirstMessage
    self.counter = counter
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard !self.answered else { return }
    let payload = self.unwrapInboundIn(data)
    if case .data(let data) = payload {
      self.requestBytes += data.data.readableBytes
    }
    if self.refuse {
      if self.atFirstMessage, self.requestBytes == 0 { return }
      self.answered = true
      context.writeAndFlush(self.wrapOutboundOut(.rstStream(.refusedStream)), promise: nil)
      return
    }
    // Answer once the request has ended.
    switch payload {
    case .headers(let headers) where headers.endStream: break
    case .data(let data) where data.endStream: break
    default: return
    }
    self.answered = true
    self.counter.answered.withLock { $0.append(self.requestBytes) }
    let headers: HPACKHeaders = [":status": "200", "content-type": "application/grpc"]
    context.write(self.wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
    let empty = ByteBuffer(bytes: [0, 0, 0, 0, 0])
    context.write(self.wrapOutboundOut(.data(.init(data: .byteBuffer(empty)))), promise: nil)
    let trailers: HPACKHeaders = ["grpc-status": "0"]
    context.writeAndFlush(
      self.wrapOutboundOut(.headers(.init(headers: trailers, endStream: true))),
      promise: nil
    )
  }
}

extension NotGRPCServer {
  /// An EmptyCall to this peer down `path`, on a pool of its own, with a `CloseWait.seconds`
  /// deadline: how it closed, and its recorder.
  ///
  /// - Parameter transport: The transport the pool's channel runs on, if not the plain HTTP/2 one.
  func emptyCall(
    path: RPCPath,
    transport: FailingStreams? = nil
  ) async throws -> (CallRecorder.Close, CallRecorder) {
    var options = GRPCCallOptions()
    let pool: GRPCChannelPool
    if let transport {
      let id: GRPCTransportID
      (pool, id) = failingStreamsPool(transport, path: path)
      options.transport = id
    } else {
      pool = GRPCChannelPool(config: .testing(path: path))
    }
    defer { pool.disconnectAll() }
    options.transportType = .insecure
    options.timeout = CloseWait.seconds
    let client = InteropClient(target: self.target, callOptions: options, channelPool: pool)
    let (call, recorder) = try client.makeCall("EmptyCall")
    call.start()
    call.writeData(try Grpc_Testing_Empty().bytes)
    call.finish()
    let close = try #require(await recorder.waitForClose())
    return (close, recorder)
  }
}
