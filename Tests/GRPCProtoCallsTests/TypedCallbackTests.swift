import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCProtoCalls
import SwiftProtobuf
import Testing

/// The generated callback methods with typed handlers: each shape, over loopback.
@Suite("Typed callbacks on the generated client")
struct TypedCallbackTests {
  /// Collects a typed call's messages and close, and lets a test wait for the close.
  final class Collector<Response: SwiftProtobuf.Message>: Sendable {
    let queue = DispatchQueue(label: "typed-callbacks")
    private let state = LockedValue<(messages: [Response], writes: Int, close: GRPCError??)>(
      ([], 0, nil)
    )

    var handler: GRPCResponseCallbacks<Response> {
      GRPCResponseCallbacks(queue: self.queue) { message in
        self.state.withLock { $0.messages.append(message) }
      } onWrite: {
        self.state.withLock { $0.writes += 1 }
      } onClose: { _, error in
        self.state.withLock { $0.close = .some(error) }
      }
    }

    var messages: [Response] { self.state.withLock { $0.messages } }

    /// The close's error (`nil` for OK); fails the test if no close came within `CloseWait.seconds`.
    func close() async throws -> GRPCError? {
      let close = await eventually(upTo: CloseWait.seconds) { self.state.withLock { $0.close } }
      return try #require(close, "the call did not close")
    }
  }

  static func client(_ server: TestServer) -> TestService {
    TestService(host: server.server.target, callOptions: server.options, channelPool: server.pool)
  }

  @Test("unary: the response arrives as its own type")
  func unary() async throws {
    try await withTestServer { server in
      let collector = Collector<Grpc_Testing_SimpleResponse>()
      let call = Self.client(server).unaryCall(
        message: try unaryRequest(responseBytes: 100),
        responseHandler: collector.handler
      )
      call.start()
      let error = try await collector.close()
      #expect(error == nil, "\(String(describing: error))")
      #expect(collector.messages.map { $0.payload.body.count } == [96])
    }
  }

  @Test("server streaming: every response, in order")
  func serverStreaming() async throws {
    try await withTestServer { server in
      let collector = Collector<Grpc_Testing_StreamingOutputCallResponse>()
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [1, 2, 3].map { size in
        var parameters = Grpc_Testing_ResponseParameters()
        parameters.size = Int32(size)
        return parameters
      }
      Self.client(server).streamingOutputCall(message: request, responseHandler: collector.handler)
        .start()
      let error = try await collector.close()
      #expect(error == nil, "\(String(describing: error))")
      #expect(collector.messages.map { $0.payload.body.count } == [1, 2, 3])
    }
  }

  @Test("client streaming: typed writes, one aggregated response")
  func clientStreaming() async throws {
    try await withTestServer { server in
      let collector = Collector<Grpc_Testing_StreamingInputCallResponse>()
      let call = Self.client(server).streamingInputCall(responseHandler: collector.handler)
      call.start()
      for size in [10, 20] {
        var request = Grpc_Testing_StreamingInputCallRequest()
        request.payload.body = Data(count: size)
        call.writeMessage(request)
      }
      call.finish()
      let error = try await collector.close()
      #expect(error == nil, "\(String(describing: error))")
      #expect(collector.messages.map(\.aggregatedPayloadSize) == [30])
    }
  }

  @Test("bidirectional: one response per typed request")
  func bidirectional() async throws {
    try await withTestServer { server in
      let collector = Collector<Grpc_Testing_StreamingOutputCallResponse>()
      let call = Self.client(server).fullDuplexCall(responseHandler: collector.handler)
      call.start()
      for size in [4, 5] {
        var request = Grpc_Testing_StreamingOutputCallRequest()
        var parameters = Grpc_Testing_ResponseParameters()
        parameters.size = Int32(size)
        request.responseParameters = [parameters]
        call.writeMessage(request)
      }
      call.finish()
      let error = try await collector.close()
      #expect(error == nil, "\(String(describing: error))")
      #expect(collector.messages.map { $0.payload.body.count } == [4, 5])
    }
  }

  @Test("GRPCUnaryResponseHandler, which is typed and untyped, still passes to a generated method")
  func unaryResponseHandler() async throws {
    try await withTestServer { server in
      let response = LockedValue<Grpc_Testing_SimpleResponse??>(nil)
      let handler = GRPCUnaryResponseHandler<Grpc_Testing_SimpleResponse>(queue: .global()) {
        message,
        _ in
        response.withLock { $0 = .some(message) }
      }
      Self.client(server).unaryCall(
        message: try unaryRequest(responseBytes: 10),
        responseHandler: handler
      ).start()
      let received = await eventually { response.withLock { $0 } }
      #expect(received??.payload.body.count == 6)
    }
  }

  @Test("GRPCUnaryResponseHandler made without a queue answers on the main queue")
  func unaryResponseHandlerOnMain() async throws {
    try await withTestServer { server in
      // The main queue, however it is serviced (on Linux, once `dispatchMain()` ran, by a
      // worker thread rather than the main thread): recognized by a key set on it.
      let mainKey = DispatchSpecificKey<UInt8>()
      DispatchQueue.main.setSpecific(key: mainKey, value: 1)
      let onMain = LockedValue<String?>(nil)
      let handler = GRPCUnaryResponseHandler<Grpc_Testing_SimpleResponse> { message, error in
        let isMain = DispatchQueue.getSpecific(key: mainKey) == 1
        onMain.withLock { $0 = "main: \(isMain), \(message != nil), \(String(describing: error))" }
      }
      Self.client(server).unaryCall(
        message: try unaryRequest(responseBytes: 10),
        responseHandler: handler
      ).start()
      let answered = await eventually { onMain.withLock { $0 } }
      #expect(answered == "main: true, true, nil")
    }
  }

  @Test(
    "an interceptor that passes on a response of another type closes the call with INTERNAL naming it"
  )
  func wrongResponseType() async throws {
    try await withTestServer { server in
      var options = server.options
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { BytesInsteadOfMessages(manager: $0) }
      ]
      let collector = Collector<Grpc_Testing_SimpleResponse>()
      let client = TestService(
        host: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      client.unaryCall(
        message: try unaryRequest(responseBytes: 10),
        responseHandler: collector.handler
      ).start()
      let error = try #require(try await collector.close())
      #expect(error.code == .internalError)
      #expect(
        error.message
          == "Received a Data as a response of a call whose responses are grpc.testing.SimpleResponse: "
          + "an interceptor passed on a message of another type"
      )
      #expect(collector.messages.isEmpty)
    }
  }
}

/// Hands the caller each response's bytes instead of the parsed message.
private final class BytesInsteadOfMessages: GRPCInterceptor, @unchecked Sendable {
  override func didReceiveData(_ data: any Sendable) {
    super.didReceiveData(Data([1, 2, 3]))
  }
}
