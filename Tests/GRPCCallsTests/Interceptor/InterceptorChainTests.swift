import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCProtoCalls
import SwiftProtobuf
import Synchronization
import Testing

@Suite("Interceptors (L50) over loopback")
struct InterceptorChainTests {
  /// Four rounds of FullDuplexCall, asking for each response with flow control when it is on.
  /// Response `n` is `n * 10` bytes of payload.
  static func pingPong(
    _ server: TestServer,
    options: GRPCCallOptions
  ) async throws -> (recorder: CallRecorder, close: CallRecorder.Close) {
    try await Self.pingPong(server.client, options: options)
  }

  /// A flow-controlled 4-round ping-pong through `client`'s target and pool.
  static func pingPong(
    _ client: InteropClient,
    options: GRPCCallOptions
  ) async throws -> (recorder: CallRecorder, close: CallRecorder.Close) {
    let (call, recorder) = try client.makeCall("FullDuplexCall", options: options)
    call.start()
    for round in 1 ... 4 {
      call.receiveNextMessages(1)
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [InteropRequests.parameters(size: Int32(round * 10))]
      call.writeData(try request.bytes)
      #expect(await recorder.wait { $0.messages.count == round })
    }
    call.finish()
    let close = try #require(await recorder.waitForClose())
    return (recorder, close)
  }

  /// `count` flow-controlled ping-pongs at once, call `index` through the interceptor
  /// `factory(index)` makes; each must succeed with every response.
  static func pingPongs(
    _ count: Int,
    _ server: TestServer,
    factory: @escaping @Sendable (_ index: Int) -> any GRPCInterceptorFactory
  ) async throws {
    try await withThrowingTaskGroup(of: Void.self) { group in
      for index in 0 ..< count {
        group.addTask {
          var options = server.options
          options.enableFlowControl = true
          options.interceptorFactories = [factory(index)]
          let (recorder, close) = try await Self.pingPong(server, options: options)
          #expect(close.error == nil)
          #expect(try Self.payloadSizes(recorder) == [10, 20, 30, 40])
        }
      }
      try await group.waitForAll()
    }
  }

  static func payloadSizes(_ recorder: CallRecorder) throws -> [Int] {
    try recorder.messages.map {
      try Grpc_Testing_StreamingOutputCallResponse(serializedBytes: $0).payload.body.count
    }
  }

  @Test("a pass-through interceptor leaves a 4-round ping-pong unchanged")
  func passThrough() async throws {
    try await withTestServer { server in
      var options = server.options
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { GRPCInterceptor(manager: $0) }
      ]
      let (recorder, close) = try await Self.pingPong(server, options: options)
      #expect(close.error == nil)
      #expect(try Self.payloadSizes(recorder) == [10, 20, 30, 40])
      #expect(recorder.initialMetadata != nil)
      #expect(recorder.deliveryContractHeld)
      #expect(recorder.closeCount == 1)
    }
  }

  @Test(
    "a counting interceptor with flow control sees each event the expected number of times, on its queue"
  )
  func countingWithFlowControl() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      var options = server.options
      options.enableFlowControl = true
      options.interceptorFactories = [CountingInterceptor.factory("A", log: log)]
      let (recorder, close) = try await Self.pingPong(server, options: options)
      #expect(close.error == nil)
      #expect(recorder.writeCount == 4)
      try await Self.expectCounts(log, name: "A")
      #expect(!log.all.contains { $0.hasSuffix("off-queue") })
    }
  }

  static func expectCounts(_ log: InterceptorLog, name: String) async throws {
    // The close is logged from the interceptor's queue as the call's close passes it.
    _ = await CloseWait.poll { log.count(name, "close") > 0 }
    let expected = [
      "start": 1, "write": 4, "finish": 1, "receiveNextMessages": 4,
      "headers": 1, "data": 4, "close": 1, "didWriteData": 4, "cancel": 0,
    ]
    for (event, count) in expected {
      #expect(
        log.count(name, event) == count,
        "\(name) saw \(event) \(log.count(name, event)) times"
      )
    }
  }

  @Test(
    "20 calls at once through interceptors sharing one concurrent queue: each sees its events in order, one at a time"
  )
  func concurrentQueue() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      let queue = DispatchQueue(label: "shared-concurrent", attributes: .concurrent)
      try await Self.pingPongs(20, server) {
        CountingInterceptor.factory("Q\($0)", log: log, queue: queue)
      }
      for index in 0 ..< 20 {
        try await Self.expectCounts(log, name: "Q\(index)")
        // A call's events in the order the call made them: start, then each round's demand and
        // write, then the finish.
        let requests = log.all.filter {
          $0.hasPrefix("Q\(index).") && !$0.hasSuffix("didWriteData")
        }
        .map { $0.dropFirst("Q\(index).".count) }
        .filter { ["start", "write", "finish"].contains($0) }
        #expect(requests == ["start", "write", "write", "write", "write", "finish"], "\(requests)")
      }
      #expect(
        !log.all.contains { $0.hasSuffix("off-queue") },
        "\(log.all.filter { $0.hasSuffix("off-queue") })"
      )
    }
  }

  @Test(
    "200 writes in a burst through an interceptor on a concurrent queue reach the server in order"
  )
  func concurrentQueueBurst() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      let queue = DispatchQueue(label: "burst-concurrent", attributes: .concurrent)
      var options = server.options
      options.interceptorFactories = [CountingInterceptor.factory("B", log: log, queue: queue)]
      let (call, recorder) = try server.client.makeCall("FullDuplexCall", options: options)
      call.start()
      for size in 1 ... 200 {
        var request = Grpc_Testing_StreamingOutputCallRequest()
        request.responseParameters = [InteropRequests.parameters(size: Int32(size))]
        call.writeData(try request.bytes)
      }
      call.finish()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error == nil)
      // The server answers each request in the order it got them.
      #expect(try Self.payloadSizes(recorder) == Array(1 ... 200))
      #expect(log.count("B", "write") == 200)
      #expect(!log.all.contains { $0.hasSuffix("off-queue") })
    }
  }

  @Test(
    "each interceptor's events run on its own queue; requests go down in order, responses up in reverse"
  )
  func chainOrderAndQueues() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      var options = server.options
      options.enableFlowControl = true
      options.interceptorFactories = ["A", "B", "C"].map {
        CountingInterceptor.factory($0, log: log)
      }
      let (_, close) = try await Self.pingPong(server, options: options)
      #expect(close.error == nil)
      for name in ["A", "B", "C"] {
        try await Self.expectCounts(log, name: name)
      }
      #expect(log.order(of: "start") == ["A", "B", "C"])
      #expect(log.order(of: "finish") == ["A", "B", "C"])
      #expect(log.order(of: "close") == ["C", "B", "A"])
      #expect(log.order(of: "headers") == ["C", "B", "A"])
      #expect(!log.all.contains { $0.hasSuffix("off-queue") }, "\(log.all)")
    }
  }

  @Test("a factory that returns nil is left out of the call")
  func nilFactorySkipped() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      var options = server.options
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { _ in nil },
        CountingInterceptor.factory("B", log: log),
        GRPCClosureInterceptorFactory { _ in nil },
      ]
      let (recorder, close) = try await Self.pingPong(server, options: options)
      #expect(close.error == nil)
      #expect(recorder.messages.count == 4)
      #expect(log.order(of: "start") == ["B"])
    }
  }

  @Test("an interceptor that rewrites metadata and the path is observed by the server")
  func rewriteMetadataAndPath() async throws {
    try await withTestServer { server in
      var options = server.options
      options.interceptorFactories = [
        StartRewritingInterceptor.factory { request, options in
          request.path = "/grpc.testing.TestService/UnaryCall"
          options.initialMetadata.removeAllValues(forKey: "x-drop-me")
          options.initialMetadata.addString("yes", forKey: "x-rewritten")
        }
      ]
      // The path the application asks for does not exist; the interceptor points it at UnaryCall.
      let (_, recorder, close) = try await server.complete(
        "NoSuchMethod",
        try unaryRequest(responseBytes: 100),
        options: options
      )
      #expect(close.error == nil)
      #expect(recorder.messages.first?.count == 100)
      let rpc = try #require(server.recorder.rpcs.last)
      #expect(rpc.method == "grpc.testing.TestService/UnaryCall")
      #expect(Array(rpc.metadata[stringValues: "x-rewritten"]) == ["yes"])
      #expect(Array(rpc.metadata[stringValues: "x-drop-me"]).isEmpty)
    }
  }

  @Test("a hijacking interceptor cancels the real call after the first round and answers the rest")
  func hijack() async throws {
    try await withTestServer { server in
      var options = server.options
      let hijacked = HijackCounter()
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { HijackingInterceptor(manager: $0, counter: hijacked) }
      ]
      let (recorder, close) = try await Self.pingPong(server, options: options)
      #expect(close.error == nil)
      #expect(try Self.payloadSizes(recorder) == [10, 20, 30, 40])
      #expect(hijacked.fabricated == 3)
      #expect(recorder.closeCount == 1)
      #expect(recorder.deliveryContractHeld)
    }
  }

  @Test("a short-circuiting interceptor answers a unary call from its cache without connecting")
  func shortCircuit() async throws {
    try await withTestServer { server in
      var options = server.options
      let cached = Data("cached response".utf8)
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { CacheInterceptor(manager: $0, cached: cached) }
      ]
      let (_, recorder, close) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 10),
        options: options
      )
      #expect(close.error == nil)
      #expect(recorder.messages == [cached])
      let headers = try #require(recorder.initialMetadata)
      #expect(Array(headers[stringValues: "x-cache"]) == ["hit"])
      try await Task.sleep(for: .milliseconds(200))
      #expect(server.recorder.acceptedConnections == 0)
      #expect(server.pool.channelCount == 0)
    }
  }

  @Test(
    "cancel by the app with interceptors: 'Canceled by app' once; every interceptor sees the cancel"
  )
  func cancelThroughChain() async throws {
    try await withTestServer { server in
      let log = InterceptorLog()
      var options = server.options
      options.interceptorFactories = ["A", "B"].map { CountingInterceptor.factory($0, log: log) }
      let (call, recorder) = try server.call("FullDuplexCall", options: options)
      call.start()
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [InteropRequests.parameters(size: 10)]
      call.writeData(try request.bytes)
      #expect(await recorder.wait { $0.messages.count == 1 })
      call.cancel()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)
      #expect(close.error?.message == "Canceled by app")
      #expect(await recorder.wait { _ in log.count("B", "cancel") == 1 })
      #expect(log.order(of: "cancel") == ["A", "B"])
      try await CancellationTests.expectNothingMoreArrives(recorder)
    }
  }

  @Test(
    "an interceptor that cancels the call at its first response: CANCELLED 'Canceled', nil trailers, once"
  )
  func interceptorCancels() async throws {
    try await withTestServer { server in
      var options = server.options
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { CancellingInterceptor(manager: $0) }
      ]
      let (call, recorder) = try server.call("FullDuplexCall", options: options)
      call.start()
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [InteropRequests.parameters(size: 10)]
      call.writeData(try request.bytes)
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)
      #expect(close.error?.message == "Canceled")
      #expect(close.trailers == nil)
      try await CancellationTests.expectNothingMoreArrives(recorder)
      #expect(recorder.closeCount == 1)
    }
  }

  @Test(
    "with a marshaller, an interceptor changes a field of the typed request and the server sees it"
  )
  func marshallerTypedRequest() async throws {
    try await withTestServer { server in
      var options = server.options
      options.marshaller = GRPCProtobufMarshaller<
        Grpc_Testing_SimpleRequest, Grpc_Testing_SimpleResponse
      >()
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { ResizingInterceptor(manager: $0) }
      ]
      let handler = TypedCollector()
      let call = GRPCCall2(
        requestOptions: try GRPCRequestOptions(
          host: server.server.target,
          path: "/grpc.testing.TestService/UnaryCall"
        ),
        responseHandler: handler,
        callOptions: options,
        channelPool: server.pool
      )
      var request = Grpc_Testing_SimpleRequest()
      request.responseSize = 1
      call.start()
      call.writeData(request)
      call.finish()
      let close = try #require(await handler.waitForClose())
      #expect(close.error == nil)
      let response = try #require(handler.messages.first as? Grpc_Testing_SimpleResponse)
      #expect(response.payload.body.count == ResizingInterceptor.size)
    }
  }

  @Test("a response the marshaller cannot parse closes with INTERNAL and ends the RPC")
  func marshallerParseFailure() async throws {
    try await withTestServer { server in
      var options = server.options
      options.marshaller = RejectingMarshaller()
      let handler = TypedCollector()
      let call = GRPCCall2(
        requestOptions: try GRPCRequestOptions(
          host: server.server.target,
          path: "/grpc.testing.TestService/StreamingOutputCall"
        ),
        responseHandler: handler,
        callOptions: options,
        channelPool: server.pool
      )
      // The first message at once, then 99 more 2 s apart: the call must end at the first. Had it
      // kept the RPC open, the close would come after 198 s, long past the 120 s wait below.
      var request = InteropRequests.stream(count: 100, size: 10)
      for index in request.responseParameters.indices.dropFirst() {
        request.responseParameters[index].intervalUs = 2_000_000
      }
      call.start()
      call.writeData(try request.bytes)
      call.finish()
      let close = try #require(
        await handler.waitForClose(),
        "the call stayed open after the parse failure"
      )
      #expect(close.error?.code == .internalError)
      #expect(close.error?.message == "Unable to parse response from the server")
      #expect(handler.messages.isEmpty)
    }
  }

  @Test("a typed request the marshaller cannot serialize closes with INTERNAL naming the problem")
  func marshallerSerializeFailure() async throws {
    try await withTestServer { server in
      var options = server.options
      options.marshaller = GRPCProtobufMarshaller<
        Grpc_Testing_SimpleRequest, Grpc_Testing_SimpleResponse
      >()
      let (call, recorder) = try server.call("UnaryCall", options: options)
      call.start()
      call.writeData("not a SimpleRequest")
      call.finish()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .internalError)
      #expect(close.error?.message.contains("String") == true)
      #expect(recorder.closeCount == 1)
    }
  }
}

/// Ends its call at the first response message, as an interceptor enforcing a policy would.
private final class CancellingInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: no state of its own.
  override func didReceiveData(_ data: any Sendable) {
    self.cancel()
  }
}
