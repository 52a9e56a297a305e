import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

@Suite("Every call shape over loopback")
struct CallShapeTests {
  @Test("empty unary")
  func emptyUnary() async throws {
    try await withTestServer { server in
      let (_, recorder, close) = try await server.complete("EmptyCall", Grpc_Testing_Empty())
      #expect(close.error == nil)
      #expect(recorder.messages.count == 1)
      #expect(try Grpc_Testing_Empty(serializedBytes: recorder.messages[0]) == Grpc_Testing_Empty())
    }
  }

  @Test("large unary: 271828-byte request, 314159-byte response")
  func largeUnary() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_SimpleRequest()
      request.responseSize = 314_159
      request.payload.body = Data(repeating: 0, count: 271_828)
      let (_, recorder, close) = try await server.complete("UnaryCall", request)
      #expect(close.error == nil)
      try #require(recorder.messages.count == 1)
      let response = try Grpc_Testing_SimpleResponse(serializedBytes: recorder.messages[0])
      #expect(response.payload.body == Data(count: 314_159))
    }
  }

  @Test("client streaming: 4 requests aggregate to 74922 bytes")
  func clientStreaming() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("StreamingInputCall")
      call.start()
      for size in [27182, 8, 1828, 45904] {
        var request = Grpc_Testing_StreamingInputCallRequest()
        request.payload.body = Data(count: size)
        call.writeData(try request.bytes)
      }
      call.finish()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error == nil)
      try #require(recorder.messages.count == 1)
      let response = try Grpc_Testing_StreamingInputCallResponse(
        serializedBytes: recorder.messages[0]
      )
      #expect(response.aggregatedPayloadSize == 74922)
    }
  }

  @Test("server streaming: 4 responses in order")
  func serverStreaming() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [31415, 9, 2653, 58979].map(InteropRequests.parameters(size:))
      let (_, recorder, close) = try await server.complete("StreamingOutputCall", request)
      #expect(close.error == nil)
      let sizes = try recorder.messages.map {
        try Grpc_Testing_StreamingOutputCallResponse(serializedBytes: $0).payload.body.count
      }
      #expect(sizes == [31415, 9, 2653, 58979])
      #expect(recorder.deliveryContractHeld)
    }
  }

  @Test("ping-pong: 4 rounds then finish")
  func pingPong() async throws {
    try await withTestServer { server in
      try await server.client.run(.pingPong)
    }
  }

  @Test("empty stream: finish at once, no messages, OK")
  func emptyStream() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("FullDuplexCall")
      call.start()
      call.finish()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error == nil)
      #expect(recorder.messages.isEmpty)
    }
  }

  @Test(
    "every standard interop case passes through each face: generated callbacks, async, raw",
    arguments: InteropTestCase.allCases,
    InteropClient.API.allCases
  )
  func interopCase(_ testCase: InteropTestCase, api: InteropClient.API) async throws {
    try await withTestServer { server in
      try await server.client.run(testCase, api: api)
    }
  }

}
