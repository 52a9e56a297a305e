import GRPCCore
import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import GRPCCalls

/// How a stream starts on a connection whose last open stream just ended (no I/O: each stream's
/// ``StreamEndInterpreter`` on an `EmbeddedChannel`, the connection's state in a shared
/// ``ConnectionRecord``).
@Suite("Stream admission after a connection's last stream ends (no I/O)")
struct StreamAdmissionTests {
  static let requestHeaders = HTTP2Frame.FramePayload.headers(
    .init(headers: [":method": "POST", ":path": "/grpc.testing.TestService/EmptyCall"])
  )

  /// A stream on `loop` whose pipeline starts with an interpreter of `record`, then `handlers`.
  static func stream(
    _ record: ConnectionRecord,
    on loop: EmbeddedEventLoop,
    then handlers: [any ChannelHandler] = []
  ) throws -> EmbeddedChannel {
    let channel = EmbeddedChannel(
      handlers: [StreamEndInterpreter(connection: record)] + handlers,
      loop: loop
    )
    try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
    return channel
  }

  /// Writes the request's HEADERS and flushes, as the transport does to open a stream.
  static func open(_ stream: EmbeddedChannel) {
    stream.writeAndFlush(Self.requestHeaders, promise: nil)
  }

  /// Ends `stream` as a completed call: the server's trailers, then the stream's close.
  static func complete(_ stream: EmbeddedChannel) throws {
    let trailers = HTTP2Frame.FramePayload.headers(
      .init(headers: ["grpc-status": "0"], endStream: true)
    )
    try stream.writeInbound(trailers)
    _ = try? stream.close().wait()
  }

  @Test(
    "a stream that flushes while the transport may be closing the connection waits, and is refused when it does close"
  )
  func refusedWhenTheTransportCloses() throws {
    let loop = EmbeddedEventLoop()
    let record = ConnectionRecord()
    let first = try Self.stream(record, on: loop)
    Self.open(first)
    #expect(try first.readOutbound(as: HTTP2Frame.FramePayload.self) != nil)
    #expect(record.openStreams == 1)

    // The last open stream ends; swift-nio-http2 then tells the transport, which closes a
    // connection it is letting go of on its next task.
    try Self.complete(first)
    loop.execute { record.closedByClient = true }

    let second = try Self.stream(record, on: loop)
    Self.open(second)
    #expect(
      try second.readOutbound(as: HTTP2Frame.FramePayload.self) == nil,
      "the stream left before the close"
    )

    loop.run()
    #expect(
      try second.readOutbound(as: HTTP2Frame.FramePayload.self) == nil,
      "the stream left on a closed connection"
    )
    let answer = try #require(try second.readInbound(as: HTTP2Frame.FramePayload.self))
    guard case .headers(let trailers) = answer else {
      Issue.record("expected trailers, got \(answer)")
      return
    }
    #expect(trailers.headers.first(name: "grpc-status") == "14")
    #expect(trailers.headers.first(name: "grpc-message") == StreamEndInterpreter.neverLeftMessage)
    #expect(record.openStreams == 0)
  }

  @Test(
    "a stream whose connection closes before it wrote anything is retried as one that never left, not as one the server refused"
  )
  func endedBeforeItWrote() throws {
    let loop = EmbeddedEventLoop()
    let stream = try Self.stream(ConnectionRecord(), on: loop)
    _ = try? stream.close().wait()

    let answer = try #require(try stream.readInbound(as: HTTP2Frame.FramePayload.self))
    guard case .rstStream(let code) = answer else {
      Issue.record("expected a reset, got \(answer)")
      return
    }
    // REFUSED_STREAM would be retried once per call (gRFC A6's "not processed").
    #expect(code == StreamEndInterpreter.neverLeftReset)
    #expect(code != .refusedStream)

    // What the transport makes of that reset, then what the call closes with.
    let reported = RPCError(
      code: .unavailable,
      message: "Stream unexpectedly closed: received RST_STREAM frame (0x4e4c: unknown error)."
    )
    let error = GRPCError(converting: reported, headers: [:], responseSizeLimit: 1 << 22)
    #expect(error.code == .unavailable)
    #expect(error.message == StreamEndInterpreter.neverLeftMessage)
    #expect(!StreamReset.isRefused(error))
  }

  @Test("a peer's reset of the never-left code reaches the transport as INTERNAL_ERROR")
  func peerResetOfTheNeverLeftCode() throws {
    let loop = EmbeddedEventLoop()
    let stream = try Self.stream(ConnectionRecord(), on: loop)
    Self.open(stream)
    _ = try stream.readOutbound(as: HTTP2Frame.FramePayload.self)
    try stream.writeInbound(HTTP2Frame.FramePayload.rstStream(StreamEndInterpreter.neverLeftReset))
    let answer = try #require(try stream.readInbound(as: HTTP2Frame.FramePayload.self))
    guard case .rstStream(let code) = answer else {
      Issue.record("expected a reset, got \(answer)")
      return
    }
    #expect(code == .internalError)
  }

  @Test(
    "a stream that flushes while the last one ends starts once the transport has kept the connection"
  )
  func startsWhenTheConnectionStays() throws {
    let loop = EmbeddedEventLoop()
    let record = ConnectionRecord()
    let first = try Self.stream(record, on: loop)
    Self.open(first)
    _ = try first.readOutbound(as: HTTP2Frame.FramePayload.self)
    try Self.complete(first)

    let second = try Self.stream(record, on: loop)
    Self.open(second)
    #expect(try second.readOutbound(as: HTTP2Frame.FramePayload.self) == nil)
    loop.run()
    let sent = try #require(try second.readOutbound(as: HTTP2Frame.FramePayload.self))
    guard case .headers = sent else {
      Issue.record("expected the request's HEADERS, got \(sent)")
      return
    }
    #expect(try second.readInbound(as: HTTP2Frame.FramePayload.self) == nil)
    #expect(record.openStreams == 1)
  }

  /// Counts what reaches the transport's stream handler, which holds back what it reads (and its
  /// flushes) until a read completes.
  final class ReadCounter: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame.FramePayload
    var reads = 0
    var readCompletes = 0

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
      self.reads += 1
    }

    func channelReadComplete(context: ChannelHandlerContext) {
      self.readCompletes += 1
    }
  }

  @Test("a stream refused on a closing connection gets its answer as a read that completes")
  func refusalIsAReadThatCompletes() throws {
    let record = ConnectionRecord()
    record.closedByClient = true
    let counter = ReadCounter()
    let stream = try Self.stream(record, on: EmbeddedEventLoop(), then: [counter])
    Self.open(stream)
    #expect(try stream.readOutbound(as: HTTP2Frame.FramePayload.self) == nil)
    #expect(counter.reads == 1)
    #expect(counter.readCompletes == 1)
  }

  @Test(
    "a stream waiting for a slot passes its writes on to its channel, unflushed, and stops its flushes until the slot frees"
  )
  func waitingWritesReachTheChannel() throws {
    let loop = EmbeddedEventLoop()
    let record = ConnectionRecord()
    record.maxConcurrentStreams = 1
    let first = try Self.stream(record, on: loop)
    Self.open(first)
    _ = try first.readOutbound(as: HTTP2Frame.FramePayload.self)

    // Between the interpreter and the channel, where the stream channel buffers unflushed
    // writes and counts them against its writability.
    let below = OutboundCounter()
    let second = EmbeddedChannel(
      handlers: [below, StreamEndInterpreter(connection: record)],
      loop: loop
    )
    try second.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
    let message = HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(bytes: [0]))))
    second.write(Self.requestHeaders, promise: nil)
    second.writeAndFlush(message, promise: nil)
    #expect(below.writes == 2, "the waiting stream's writes did not reach its channel")
    #expect(below.flushes == 0, "the waiting stream flushed")
    #expect(try second.readOutbound(as: HTTP2Frame.FramePayload.self) == nil)

    try Self.complete(first)
    loop.run()
    #expect(below.flushes == 1)
    guard case .headers = try second.readOutbound(as: HTTP2Frame.FramePayload.self) else {
      Issue.record("the request's HEADERS did not leave first")
      return
    }
    guard case .data = try second.readOutbound(as: HTTP2Frame.FramePayload.self) else {
      Issue.record("the request's message did not leave after its HEADERS")
      return
    }
    #expect(record.openStreams == 1)
  }

  /// Counts the writes and flushes that pass it on their way to the channel.
  final class OutboundCounter: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = HTTP2Frame.FramePayload
    var writes = 0
    var flushes = 0

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
      self.writes += 1
      context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
      self.flushes += 1
      context.flush()
    }
  }
}
