import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import Testing

@testable import GRPCCalls

/// A frame for a stream that has closed, on a client connection set up as the transport sets
/// one up (swift-nio-http2's handler with its stream multiplexer, an 8 MiB window), with the
/// connection's handlers of ours; the server's bytes written by hand. No I/O.
@Suite("A frame for a closed stream (no I/O)")
struct ClosedStreamFrameFilterTests {
  /// Collects the errors that reach it: at the end of the pipeline, where the transport's
  /// connection handler would close the connection on them; just after the HTTP/2 handler, the
  /// errors it raised (passed on).
  final class ErrorCatcher: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame
    typealias InboundOut = HTTP2Frame
    var errors: [any Error] = []
    let passesOn: Bool

    init(passesOn: Bool) {
      self.passesOn = passesOn
    }

    var sawNoSuchStream: Bool { self.errors.contains { $0 is NIOHTTP2Errors.NoSuchStream } }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
      self.errors.append(error)
      if self.passesOn { context.fireErrorCaught(error) }
    }
  }

  /// Stands in for a socket whose send buffer the first request fills: once its DATA frame is
  /// written, the channel stops being writable, as a socket channel does when its pending
  /// bytes pass the high watermark.
  final class SocketFiller: ChannelOutboundHandler, @unchecked Sendable {
    typealias OutboundIn = IOData
    private var walker = FrameHeaderWalker(skipping: 24)
    private var filled = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
      var wroteData = false
      if case .byteBuffer(let bytes) = self.unwrapOutboundIn(data) {
        self.walker.walk(bytes) { type, _ in wroteData = wroteData || type == 0x0 }
      }
      context.write(data, promise: promise)
      if wroteData, !self.filled, let channel = context.channel as? EmbeddedChannel {
        self.filled = true
        channel.isWritable = false
        context.fireChannelWritabilityChanged()
      }
    }
  }

  struct Connection {
    let channel: EmbeddedChannel
    let multiplexer: NIOHTTP2Handler.StreamMultiplexer
    /// What reaches the transport's connection handler.
    let catcher = ErrorCatcher(passesOn: false)
    /// What the HTTP/2 handler raised.
    let raised = ErrorCatcher(passesOn: true)
    let record: ConnectionRecord
    var encoder = HPACKEncoder(allocator: ByteBufferAllocator())

    init(filtered: Bool) throws {
      self.channel = EmbeddedChannel()
      let window = 8 * 1024 * 1024
      var connection = NIOHTTP2Handler.ConnectionConfiguration()
      connection.initialSettings = [HTTP2Setting(parameter: .initialWindowSize, value: window)]
      var stream = NIOHTTP2Handler.StreamConfiguration()
      stream.targetWindowSize = window
      let pipeline = self.channel.pipeline.syncOperations
      self.multiplexer = try pipeline.configureHTTP2Pipeline(
        mode: .client,
        connectionConfiguration: connection,
        streamConfiguration: stream
      ) { $0.eventLoop.makeSucceededVoidFuture() }
      self.record = try GoAwayRecorder.install(on: self.channel, onGoAway: nil)
      if filtered {
        try ClosedStreamFrameFilter.install(on: self.channel, record: self.record)
      }
      try pipeline.addHandler(self.catcher)
      let http2 = try pipeline.handler(type: NIOHTTP2Handler.self)
      try pipeline.addHandler(self.raised, position: .after(http2))
      try pipeline.addHandler(SocketFiller(), position: .first)
      try self.channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
      // The server's SETTINGS. Its acknowledgement of the client's (the 8 MiB window) has not
      // come yet, so a stream that opens now writes a WINDOW_UPDATE to raise its window.
      try self.receive(type: 0x4, stream: 0, payload: ByteBuffer())
    }

    /// Writes a frame from the server: a 9-byte header (RFC 9113 §4.1), then the payload.
    func receive(type: UInt8, flags: UInt8 = 0, stream: UInt32, payload: ByteBuffer) throws {
      let length = payload.readableBytes
      var frame = ByteBuffer()
      frame.writeInteger(UInt8(length >> 16 & 0xff))
      frame.writeInteger(UInt16(length & 0xffff))
      frame.writeInteger(type)
      frame.writeInteger(flags)
      frame.writeInteger(stream)
      frame.writeImmutableBuffer(payload)
      try self.channel.writeInbound(frame)
    }

    /// The server answers `stream` with an empty message and an OK status.
    mutating func answer(stream: UInt32) throws {
      let response: HPACKHeaders = [":status": "200", "content-type": "application/grpc"]
      var block = ByteBuffer()
      try self.encoder.encode(headers: response, to: &block)
      try self.receive(type: 0x1, flags: 0x4, stream: stream, payload: block)
      try self.receive(type: 0x0, stream: stream, payload: ByteBuffer(bytes: [0, 0, 0, 0, 0]))
      block.clear()
      try self.encoder.encode(headers: ["grpc-status": "0"], to: &block)
      try self.receive(type: 0x1, flags: 0x5, stream: stream, payload: block)
      self.channel.embeddedEventLoop.run()
    }

    /// Opens a stream and sends a whole request on it.
    func openStream() throws -> any Channel {
      let created = self.multiplexer.createStreamChannel { $0.eventLoop.makeSucceededVoidFuture() }
      self.channel.embeddedEventLoop.run()
      let stream = try created.wait()
      let request: HPACKHeaders = [
        ":method": "POST", ":scheme": "http", ":path": "/grpc.testing.TestService/EmptyCall",
        ":authority": "localhost", "content-type": "application/grpc", "te": "trailers",
      ]
      stream.write(HTTP2Frame.FramePayload.headers(.init(headers: request)), promise: nil)
      let message = ByteBuffer(bytes: [0, 0, 0, 0, 0])
      stream.writeAndFlush(
        HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(message), endStream: true)),
        promise: nil
      )
      self.channel.embeddedEventLoop.run()
      return stream
    }

    /// The socket drains: the channel is writable again, and the HTTP/2 handler sends the
    /// frames it held.
    func drained() {
      self.channel.isWritable = true
      self.channel.pipeline.fireChannelWritabilityChanged()
      self.channel.embeddedEventLoop.run()
    }
  }

  @Test("swift-nio-http2 raises NoSuchStream for a WINDOW_UPDATE it held while the stream closed")
  func unfilteredErrorReachesTheTransport() throws {
    // When this fails, swift-nio-http2 no longer raises the error: drop the filter.
    var connection = try Connection(filtered: false)
    let stream = try connection.openStream()
    try connection.answer(stream: 1)
    try stream.closeFuture.wait()
    connection.drained()
    #expect(connection.raised.sawNoSuchStream)
    #expect(connection.catcher.sawNoSuchStream)
  }

  @Test("the filter keeps that error from the transport, and the connection takes the next call")
  func filteredConnectionStaysUp() throws {
    var connection = try Connection(filtered: true)
    let first = try connection.openStream()
    try connection.answer(stream: 1)
    try first.closeFuture.wait()
    connection.drained()
    #expect(connection.raised.sawNoSuchStream)
    #expect(connection.catcher.errors.isEmpty)

    let second = try connection.openStream()
    try connection.answer(stream: 3)
    try second.closeFuture.wait()
    #expect(connection.catcher.errors.isEmpty)
    #expect(!connection.record.sentGoAway)
  }

  @Test("a server's DATA on a closed stream still fails the connection (a GOAWAY went out)")
  func serverFrameOnClosedStreamPasses() throws {
    var connection = try Connection(filtered: true)
    connection.drained()
    let stream = try connection.openStream()
    connection.drained()
    try connection.answer(stream: 1)
    try stream.closeFuture.wait()
    #expect(connection.catcher.errors.isEmpty)

    try connection.receive(type: 0x0, stream: 1, payload: ByteBuffer(bytes: [0, 0, 0, 0, 0]))
    #expect(connection.catcher.sawNoSuchStream)
    #expect(connection.record.sentGoAway)
  }
}
