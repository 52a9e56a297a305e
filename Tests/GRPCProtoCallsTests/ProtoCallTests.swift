import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCProtoCalls
import SwiftProtobuf
import Testing

extension TestServer {
  /// The interop TestService as a proto service on this server.
  func service(options: GRPCCallOptions? = nil, host: String? = nil) -> GRPCProtoService {
    GRPCProtoService(
      host: host ?? self.server.target,
      packageName: "grpc.testing",
      serviceName: "TestService",
      callOptions: options ?? self.options,
      channelPool: self.pool
    )
  }
}

@Suite("Proto calls (L38) over loopback")
struct ProtoCallTests {
  @Test("a method's path: /package.Service/Method, or /Service/Method with no package")
  func paths() {
    #expect(
      GRPCProtoMethod(package: "grpc.testing", service: "TestService", method: "UnaryCall").path
        == "/grpc.testing.TestService/UnaryCall"
    )
    #expect(GRPCProtoMethod(package: "", service: "Echo", method: "Get").path == "/Echo/Get")
  }

  @Test(
    "a unary call with GRPCUnaryResponseHandler: the response, headers and trailers",
    arguments: [false, true]
  )
  func unary(flowControl: Bool) async throws {
    try await withTestServer { server in
      var options = server.options
      options.enableFlowControl = flowControl
      options.initialMetadata.addString("hello", forKey: "x-grpc-test-echo-initial")
      options.initialMetadata.addBinary([1, 2, 3], forKey: "x-grpc-test-echo-trailing-bin")
      let done = LockedValue<(Grpc_Testing_SimpleResponse?, GRPCError?)?>(nil)
      let handler = GRPCUnaryResponseHandler<Grpc_Testing_SimpleResponse>(
        queue: DispatchQueue(label: "unary")
      ) {
        response,
        error in done.withLock { $0 = (response, error) }
      }
      let call = server.service().unaryCall(
        method: "UnaryCall",
        message: try unaryRequest(responseBytes: 100),
        responseHandler: handler,
        callOptions: options,
        responseClass: Grpc_Testing_SimpleResponse.self
      )
      call.start()
      let recorder = CallRecorder()
      #expect(await recorder.wait { _ in done.withLock { $0 != nil } })
      let (response, error) = try #require(done.withLock { $0 })
      #expect(error == nil)
      #expect(try response?.serializedData().count == 100)
      #expect(
        handler.responseHeaders?[stringValues: "x-grpc-test-echo-initial"].first { _ in true }
          == "hello"
      )
      #expect(
        handler.responseTrailers?[binaryValues: "x-grpc-test-echo-trailing-bin"].first { _ in true }
          == [1, 2, 3]
      )
    }
  }

  @Test("a response that does not parse closes with INTERNAL and cancels the RPC on the server")
  func parseFailure() async throws {
    try await withTestServer { server in
      // StreamingOutputCall's responses hold a payload in field 1; read as a StringValue, whose
      // field 1 is a string, a 200-byte payload's length (0xC8 0x01) is not UTF-8: the bytes
      // are not the response type, and SwiftProtobuf says so.
      // 30 s of responses: long enough that the server cannot finish before the cancel
      // reaches it, however busy the machine; it ends early when the cancel works.
      var request = InteropRequests.stream(count: 1500, size: 200)
      for index in request.responseParameters.indices {
        request.responseParameters[index].intervalUs = 20_000
      }
      let recorder = ProtoCallRecorder()
      let call = server.service().unaryCall(
        method: "StreamingOutputCall",
        message: request,
        responseHandler: recorder,
        responseClass: Google_Protobuf_StringValue.self
      )
      call.start()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .internalError)
      #expect(close.error?.message == "Unable to parse response from the server")
      #expect(close.error?.cause is BinaryDecodingError, "\(String(describing: close.error))")
      #expect(recorder.messages.isEmpty)
      let stopped = await server.streamStopped()
      #expect(stopped, "the server kept streaming: \(server.streamProgress)")
    }
  }

  @Test("streaming: cancel after finish still reaches the RPC and stops the server's stream")
  func cancelAfterFinish() async throws {
    try await withTestServer { server in
      let recorder = ProtoCallRecorder()
      let call = server.service().streamingCall(
        method: "FullDuplexCall",
        requestClass: Grpc_Testing_StreamingOutputCallRequest.self,
        responseHandler: recorder,
        responseClass: Grpc_Testing_StreamingOutputCallResponse.self
      )
      // 30 s of responses, so that only the cancel can end the stream early.
      var request = InteropRequests.stream(count: 1500, size: 10)
      for index in request.responseParameters.indices {
        request.responseParameters[index].intervalUs = 20_000
      }
      call.start()
      call.writeMessage(request)
      call.finish()
      #expect(await recorder.wait { $0.messages.count >= 2 })
      call.cancel()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)
      let stopped = await server.streamStopped()
      #expect(stopped, "the server kept streaming: \(server.streamProgress)")
    }
  }

  @Test("streaming with flow control: receiveNextMessages after finish still reaches the RPC")
  func demandAfterFinish() async throws {
    try await withTestServer { server in
      var options = server.options
      options.enableFlowControl = true
      let recorder = ProtoCallRecorder()
      let call = server.service().streamingCall(
        method: "StreamingOutputCall",
        requestClass: Grpc_Testing_StreamingOutputCallRequest.self,
        responseHandler: recorder,
        callOptions: options,
        responseClass: Grpc_Testing_StreamingOutputCallResponse.self
      )
      call.start()
      call.writeMessage(InteropRequests.stream(count: 3, size: 10))
      call.finish()
      try await Task.sleep(for: .milliseconds(300))
      #expect(recorder.messages.isEmpty)
      call.receiveNextMessages(3)
      let close = try #require(await recorder.waitForClose())
      #expect(close.error == nil)
      #expect(recorder.messages.count == 3)
      #expect(recorder.writeCount == 1)
    }
  }

  @Test("per-call options replace the service's; callOptions is a copy")
  func optionsReplace() async throws {
    try await withTestServer { server in
      var serviceOptions = server.options
      serviceOptions.initialMetadata.addString("service", forKey: "x-origin")
      let service = server.service(options: serviceOptions)
      var perCall = service.callOptions
      perCall.initialMetadata.replaceOrAddString("call", forKey: "x-origin")
      #expect(Array(service.callOptions.initialMetadata[stringValues: "x-origin"]) == ["service"])
      for (options, expected) in [(nil, "service"), (perCall, "call")]
        as [(GRPCCallOptions?, String)]
      {
        let recorder = ProtoCallRecorder()
        service.unaryCall(
          method: "EmptyCall",
          message: Grpc_Testing_Empty(),
          responseHandler: recorder,
          callOptions: options,
          responseClass: Grpc_Testing_Empty.self
        ).start()
        #expect(await recorder.waitForClose()?.error == nil)
        let rpc = try #require(server.recorder.rpcs.last)
        #expect(Array(rpc.metadata[stringValues: "x-origin"]) == [expected])
      }
    }
  }
}
