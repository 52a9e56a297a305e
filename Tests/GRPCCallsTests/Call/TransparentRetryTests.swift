import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Testing

/// gRFC A6 transparent retry: a call that failed before its stream opened is tried once more,
/// whatever its retry policy; and `waitForReady` waits for a connection instead of failing.
@Suite("Transparent retry and wait for ready")
struct TransparentRetryTests {
  @Test(
    "a call whose stream could not open is retried once, transparently",
    arguments: RPCPath.allCases
  )
  func retriedOnce(path: RPCPath) async throws {
    try await withTestServer(path: path) { server in
      let (close, attempts) = try await Self.unary(on: server, path: path, failingStreams: 1)
      #expect(close != nil && close?.error == nil, "\(String(describing: close?.error))")
      #expect(attempts == 2)
      #expect(server.recorder.rpcs.count == 1)
    }
  }

  @Test(
    "only once: a second failure before the stream opens fails the call with UNAVAILABLE",
    arguments: RPCPath.allCases
  )
  func onlyOnce(path: RPCPath) async throws {
    try await withTestServer(path: path) { server in
      let (close, attempts) = try await Self.unary(on: server, path: path, failingStreams: 2)
      #expect(close?.error?.code == .unavailable)
      #expect(close?.error?.message == FailingStreams.message)
      #expect(attempts == 2)
      #expect(server.recorder.rpcs.isEmpty)
    }
  }

  /// A unary call on a transport whose first `failures` streams fail before they open.
  ///
  /// - Returns: How the call closed, and how many streams it asked the transport for.
  static func unary(
    on server: TestServer,
    path: RPCPath,
    failingStreams failures: Int
  ) async throws -> (CallRecorder.Close?, attempts: Int) {
    let transport = FailingStreams(failures: failures, port: server.server.port)
    let (pool, options) = server.pool(with: transport, path: path)
    defer { pool.disconnectAll() }
    let client = InteropClient(
      target: server.server.target,
      callOptions: options,
      channelPool: pool
    )
    let (call, recorder) = try client.makeCall("UnaryCall")
    call.writeData(try Grpc_Testing_SimpleRequest().bytes)
    call.finish()
    call.start()
    return (await recorder.waitForClose(), transport.attempts)
  }

  @Test(
    "connections killed under load: every call closes once, with OK or UNAVAILABLE, and new calls succeed"
  )
  func killedConnections() async throws {
    try await withTestServer { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      var options = server.options
      // Only a guard against a hang. swift-nio-http2 opens 100 streams at a time on a connection
      // whose server names no limit (ours), so the last calls wait for three rounds of 100: on a
      // busy machine under ThreadSanitizer, tens of seconds.
      options.timeout = 150
      let client = InteropClient(
        target: "127.0.0.1:\(proxy.port)",
        callOptions: options,
        channelPool: server.pool
      )
      try await client.run(.emptyUnary)
      let codes = try await withThrowingTaskGroup(of: RPCError.Code?.self) { group in
        for index in 0 ..< 400 {
          if index == 200 {
            proxy.resetConnections()
          }
          let (call, recorder) = try client.makeCall("UnaryCall")
          call.start()
          call.writeData(try Grpc_Testing_SimpleRequest().bytes)
          call.finish()
          group.addTask {
            let close = await recorder.waitForClose(upTo: 180)
            #expect(close != nil)
            #expect(recorder.closeCount == 1 && recorder.deliveryContractHeld)
            return close?.error?.code
          }
        }
        return try await group.reduce(into: [RPCError.Code?]()) { $0.append($1) }
      }
      #expect(codes.count == 400)
      let unexpected = codes.filter { $0 != nil && $0 != .unavailable }
      #expect(unexpected.isEmpty, "closed with \(unexpected)")
      // Once the fault is gone, the channel serves new calls. A call may still land on a
      // connection whose reset the client has not read yet (that one fails UNAVAILABLE, as it
      // should); calls that wait for the channel to reconnect succeed within the deadline.
      let error = await recoveredError(client)
      #expect(error == nil, "the channel did not recover: \(String(describing: error))")
    }
  }

  @Test("waitForReady: a call waits through a server restart, where one without it fails fast")
  func waitsThroughRestart() async throws {
    let first = try await InteropServer.start(host: "127.0.0.1", port: 0)
    let port = first.port
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions().reconnectingSoon()
    options.transportType = .insecure
    options.timeout = CloseWait.seconds
    let client = InteropClient(target: first.target, callOptions: options, channelPool: pool)
    try await client.run(.emptyUnary)
    await first.stopAndWait()

    // Fails fast while the server is down.
    let (failing, failingRecorder) = try client.makeCall("UnaryCall")
    failing.writeData(try Grpc_Testing_SimpleRequest().bytes)
    failing.finish()
    failing.start()
    #expect(await failingRecorder.waitForClose()?.error?.code == .unavailable)

    var waiting = options
    waiting.waitForReady = true
    let (call, recorder) = try client.makeCall("UnaryCall", options: waiting)
    call.writeData(try Grpc_Testing_SimpleRequest().bytes)
    call.finish()
    call.start()
    // Still waiting: the server is down.
    #expect(recorder.close == nil)
    let second = try await InteropServer.start(host: "127.0.0.1", port: port)
    let close = await recorder.waitForClose()
    #expect(close != nil && close?.error == nil, "\(String(describing: close?.error))")
    #expect(second.recorder.rpcs.count == 1)
    await second.stopAndWait()
  }
}

/// An HTTP/2 transport whose first `failures` streams fail before they open, as when a
/// connection went away: a decorator over the real transport.
final class FailingStreams: ClientTransport {
  typealias Bytes = GRPCNIOTransportBytes

  static let message = "injected: the connection went away before the stream opened"

  let base: HTTP2ClientTransport.Posix
  /// For each stream asked for, in order: the message it fails with before it opens, or `nil`
  /// to open it; streams past the script open.
  private let state: LockedValue<(script: [String?], attempts: Int)>

  convenience init(failures: Int, port: Int) {
    self.init(script: Array(repeating: Self.message, count: failures), port: port)
  }

  init(script: [String?], port: Int) {
    self.state = LockedValue((script, 0))
    self.base = try! HTTP2ClientTransport.Posix(
      target: .ipv4(address: "127.0.0.1", port: port),
      transportSecurity: .plaintext
    )
  }

  /// How many streams were asked for.
  var attempts: Int { self.state.withLock { $0.attempts } }

  var retryThrottle: RetryThrottle? { self.base.retryThrottle }

  func connect() async throws {
    try await self.base.connect()
  }

  func beginGracefulShutdown() {
    self.base.beginGracefulShutdown()
  }

  func withStream<T: Sendable>(
    descriptor: MethodDescriptor,
    options: CallOptions,
    _ closure: (RPCStream<Inbound, Outbound>, ClientContext) async throws -> T
  ) async throws -> T {
    let failure = self.state.withLock { state -> String? in
      defer { state.attempts += 1 }
      return state.attempts < state.script.count ? state.script[state.attempts] : nil
    }
    if let failure {
      throw RPCError(code: .unavailable, message: failure)
    }
    return try await self.base.withStream(descriptor: descriptor, options: options, closure)
  }

  func config(forMethod descriptor: MethodDescriptor) -> MethodConfig? {
    self.base.config(forMethod: descriptor)
  }
}

extension TestServer {
  /// A pool whose calls run on `transport`, and options that pick it.
  func pool(with transport: FailingStreams, path: RPCPath) -> (GRPCChannelPool, GRPCCallOptions) {
    let (pool, id) = failingStreamsPool(transport, path: path)
    var options = self.options
    options.transport = id
    return (pool, options)
  }
}

/// A pool whose transport registry holds `transport`, and the ID it is registered under.
func failingStreamsPool(
  _ transport: FailingStreams,
  path: RPCPath
) -> (GRPCChannelPool, GRPCTransportID) {
  let registry = GRPCTransportRegistry()
  let id = GRPCTransportID("test.failing-streams")
  registry.register(GRPCClosureTransportFactory { _, _ in transport }, for: id)
  var config = GRPCChannelPool.Config.testing(path: path)
  config.transportRegistry = registry
  return (GRPCChannelPool(config: config), id)
}

/// A stream the server refused did no work there: it is retried like one that never opened.
@Suite("Transparent retry of refused streams")
struct RefusedStreamRetryTests {
  /// A unary call to a server that refuses its first `refusals` streams.
  static func unary(refusals: Int, path: RPCPath) async throws -> (CallRecorder.Close, streams: Int)
  {
    let server = try await NotGRPCServer.start(answering: .refuseThenAnswer(count: refusals))
    let (close, recorder) = try await server.emptyCall(path: path)
    #expect(recorder.closeCount == 1 && recorder.deliveryContractHeld)
    let streams = server.streams
    await server.stop()
    return (close, streams)
  }

  @Test(
    "a unary call whose stream the server refused (REFUSED_STREAM) is sent again and succeeds",
    arguments: RPCPath.allCases
  )
  func refusedOnce(path: RPCPath) async throws {
    let (close, streams) = try await Self.unary(refusals: 1, path: path)
    #expect(close.error == nil, "\(String(describing: close.error))")
    #expect(streams == 2)
  }

  @Test(
    "refused, then no connection ready for the retry (a server's graceful shutdown): tried again until one is, and succeeds",
    arguments: RPCPath.allCases
  )
  func refusedThenNoConnection(path: RPCPath) async throws {
    // The retry comes while the transport replaces the refusing connection. Sequential calls
    // through 30 graceful shutdowns failed this way when the refused stream's opening was taken
    // for the retry's.
    try await Self.servedOnThirdTry(failingStreams: [nil, Self.noConnection], path: path)
  }

  @Test(
    "no connection ready, then refused: each kind of unsent RPC has a transparent retry of its own (gRFC A6)",
    arguments: RPCPath.allCases
  )
  func noConnectionThenRefused(path: RPCPath) async throws {
    try await Self.servedOnThirdTry(failingStreams: [Self.noConnection], path: path)
  }

  /// The transport's words for a channel between two connections (the moment after a GOAWAY).
  static let noConnection = "Channel isn't ready, no subchannel available."

  /// An EmptyCall to a server that refuses its first stream, on a transport whose streams fail
  /// before they open as `script` says: served by the third stream asked for.
  static func servedOnThirdTry(failingStreams script: [String?], path: RPCPath) async throws {
    let server = try await NotGRPCServer.start(answering: .refuseThenAnswer(count: 1))
    let transport = FailingStreams(script: script, port: server.port)
    let (close, recorder) = try await server.emptyCall(path: path, transport: transport)
    #expect(close.error == nil, "\(String(describing: close.error))")
    #expect(recorder.closeCount == 1 && recorder.deliveryContractHeld)
    #expect(transport.attempts == 3)
    #expect(server.streams == 2)
    await server.stop()
  }

  @Test(
    "a client stream refused after its first requests left is sent again whole: the server gets every request once, the app is told of each write once",
    arguments: RPCPath.allCases
  )
  func streamedRequestsReplayed(path: RPCPath) async throws {
    let server = try await NotGRPCServer.start(answering: .refuseAtFirstMessageThenAnswer(count: 1))
    let pool = GRPCChannelPool(config: .testing(path: path))
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.timeout = CloseWait.seconds
    options.enableFlowControl = true
    let client = InteropClient(target: server.target, callOptions: options, channelPool: pool)
    let (call, recorder) = try client.makeCall("StreamingInputCall")
    // Started before its requests: they are streamed, not known when the stream opens.
    call.receiveNextMessages(1)
    call.start()
    var request = Grpc_Testing_StreamingInputCallRequest()
    request.payload.body = Data(count: 1000)
    let message = try request.bytes
    call.writeData(message)
    // The second request waits for the first one's write, so that the refusal comes while the
    // call is under way.
    #expect(await eventually { recorder.writeCount >= 1 ? true : nil } == true)
    call.writeData(message)
    call.finish()
    let close = try #require(await recorder.waitForClose())
    #expect(close.error == nil, "\(String(describing: close.error))")
    #expect(server.streams == 2)
    #expect(server.answeredRequestBytes == [2 * (5 + message.count)])
    #expect(recorder.writeCount == 2)
    #expect(recorder.closeCount == 1 && recorder.deliveryContractHeld)
    await server.stop()
  }

  @Test(
    "only once: refused twice, the call fails with UNAVAILABLE saying the server refused it",
    arguments: RPCPath.allCases
  )
  func refusedTwice(path: RPCPath) async throws {
    let (close, streams) = try await Self.unary(refusals: 2, path: path)
    #expect(close.error?.code == .unavailable, "\(String(describing: close.error))")
    #expect(
      close.error?.message
        == "The server reset the stream (RST_STREAM REFUSED STREAM, 0x7) before sending a status"
    )
    #expect(streams == 2)
  }
}
