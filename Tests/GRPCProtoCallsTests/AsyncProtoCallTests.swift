import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCProtoCalls
import SwiftProtobuf
import Testing

@Suite("async/await proto calls over loopback")
struct AsyncProtoCallTests {
  @Test("unary: try await returns the response")
  func unary() async throws {
    try await withTestServer { server in
      let response = try await server.service().unary(
        method: "UnaryCall",
        request: try unaryRequest(responseBytes: 64),
        responseType: Grpc_Testing_SimpleResponse.self
      )
      #expect(try response.serializedData().count == 64)
    }
  }

  @Test("unary: a server status becomes the thrown GRPCError")
  func unaryError() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_SimpleRequest()
      request.responseStatus.code = 5
      request.responseStatus.message = "missing"
      await #expect {
        try await server.service().unary(
          method: "UnaryCall",
          request: request,
          responseType: Grpc_Testing_SimpleResponse.self
        )
      } throws: { error in
        (error as? GRPCError)?.code == .notFound && (error as? GRPCError)?.message == "missing"
      }
    }
  }

  @Test("server streaming: every response, in order")
  func serverStreaming() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [31415, 9, 2653, 58979].map {
        InteropRequests.parameters(size: $0)
      }
      let sizes = try await server.service().serverStreaming(
        method: "StreamingOutputCall",
        request: request,
        responseType: Grpc_Testing_StreamingOutputCallResponse.self
      ) { responses in
        var sizes: [Int] = []
        for try await response in responses {
          sizes.append(response.payload.body.count)
        }
        return sizes
      }
      #expect(sizes == [31415, 9, 2653, 58979])
    }
  }

  @Test("client streaming: the writer's messages are aggregated")
  func clientStreaming() async throws {
    try await withTestServer { server in
      let response = try await server.service().clientStreaming(
        method: "StreamingInputCall",
        requestType: Grpc_Testing_StreamingInputCallRequest.self,
        responseType: Grpc_Testing_StreamingInputCallResponse.self
      ) { writer in
        for size in [27182, 8, 1828, 45904] {
          var request = Grpc_Testing_StreamingInputCallRequest()
          request.payload.body = Data(count: size)
          try await writer.write(request)
        }
      }
      #expect(response.aggregatedPayloadSize == 74922)
    }
  }

  @Test("bidirectional streaming: ping-pong with a writer and a response stream")
  func bidirectional() async throws {
    try await withTestServer { server in
      let sizes: [Int32] = [31415, 9, 2653, 58979]
      let received = try await server.service().bidirectionalStreaming(
        method: "FullDuplexCall",
        requestType: Grpc_Testing_StreamingOutputCallRequest.self,
        responseType: Grpc_Testing_StreamingOutputCallResponse.self
      ) { writer in
        for size in sizes {
          var request = Grpc_Testing_StreamingOutputCallRequest()
          request.responseParameters = [InteropRequests.parameters(size: size)]
          try await writer.write(request)
        }
      } body: { responses in
        var received: [Int] = []
        for try await response in responses {
          received.append(response.payload.body.count)
        }
        return received
      }
      #expect(received == sizes.map(Int.init))
    }
  }

  @Test(
    "bidirectional streaming: a body that returns ends the call, although its requests closure still waits on the app's own stream"
  )
  func bodyReturnEndsCall() async throws {
    try await withTestServer { server in
      var options = server.options
      // Only this deadline could end a call that the body's return did not.
      options.timeout = 120
      let (appStream, appContinuation) = AsyncStream.makeStream(of: Int32.self)
      defer { appContinuation.finish() }
      let first = try await server.service(options: options).bidirectionalStreaming(
        method: "FullDuplexCall",
        requestType: Grpc_Testing_StreamingOutputCallRequest.self,
        responseType: Grpc_Testing_StreamingOutputCallResponse.self
      ) { writer in
        var request = Grpc_Testing_StreamingOutputCallRequest()
        request.responseParameters = [InteropRequests.parameters(size: 7)]
        try await writer.write(request)
        // The app's own stream, which never ends while the call runs.
        for await size in appStream {
          request.responseParameters = [InteropRequests.parameters(size: size)]
          try await writer.write(request)
        }
      } body: { responses in
        var iterator = responses.makeAsyncIterator()
        return try await iterator.next()?.payload.body.count
      }
      // Returned, rather than thrown DEADLINE_EXCEEDED after 120 s.
      #expect(first == 7)
    }
  }

  @Test("cancelling the task cancels the RPC: CANCELLED, and the server stops streaming")
  func taskCancellation() async throws {
    try await withTestServer { server in
      let request = InteropRequests.longStream()
      let first = LockedValue(false)
      let service = server.service()
      let task = Task {
        try await service.serverStreaming(
          method: "StreamingOutputCall",
          request: request,
          responseType: Grpc_Testing_StreamingOutputCallResponse.self
        ) { responses in
          for try await _ in responses {
            first.withLock { $0 = true }
          }
        }
      }
      #expect(await CallRecorder().wait { _ in first.withLock { $0 } })
      task.cancel()
      await #expect {
        try await task.value
      } throws: { error in
        (error as? GRPCError)?.code == .cancelled
      }
      let stopped = await server.streamStopped()
      #expect(stopped, "the server kept streaming: \(server.streamProgress)")
    }
  }

  @Test("a consumer that stops reading holds the server back; leaving the body cancels the call")
  func backPressure() async throws {
    // Uncompressed: flow control bounds bytes on the wire (the Flow control article).
    try await withTestServer(compression: false) { server in
      var options = server.options
      options.http2TargetWindowSize = 1 << 20
      let messages = 2000
      let messageSize = 64 * 1024
      // Through a proxy that counts the bytes the server sends (FlowControlBounds.wireLead) and
      // keeps the client's.
      let proxy = try FaultProxy(upstreamPort: server.server.port, recordingClientBytes: true)
      defer { proxy.close() }
      let sent = try await server.service(options: options, host: "127.0.0.1:\(proxy.port)")
        .serverStreaming(
          method: "StreamingOutputCall",
          request: InteropRequests.stream(count: messages, size: Int32(messageSize)),
          responseType: Grpc_Testing_StreamingOutputCallResponse.self
        ) { responses in
          var iterator = responses.makeAsyncIterator()
          _ = try await iterator.next()
          // The consumer stops: the server fills the windows, then sends nothing more.
          let held = await steadyValue { proxy.serverBytes }
          #expect(held != nil, "the server never stopped sending")
          return held ?? Int.max
        }
      let left = ContinuousClock.now
      #expect(
        sent <= FlowControlBounds.wireLead(window: 1 << 20),
        "the server sent \(sent >> 10) KiB ahead"
      )
      // Leaving the body cancelled the call: the client reset the stream, the server's own record
      // says its stream was ended, and what went on the wire stayed within the windows. Unless
      // the server's handler had written its whole stream before the body was left:
      // grpc-swift-nio-transport's server does not always hold a handler's writes back when the
      // client's window is full (under load a handler once wrote all 2,000 messages, 125 MiB,
      // into the server's buffers while 1.5 MiB reached the client), and the reset then finds
      // no handler to stop.
      let reset =
        await eventually {
          proxy.clientFrames.contains(where: \.isReset) ? true : nil
        } == true
      let finishedFirst = server.recorder.lastStreamCompletion.map { $0 < left } ?? false
      let stopped = finishedFirst ? false : await server.streamStopped()
      let total = await steadyValue { proxy.serverBytes }
      #expect(
        reset && (stopped || finishedFirst) && total != nil
          && total! <= FlowControlBounds.wireLead(window: 1 << 20),
        """
        the client reset the stream: \(reset); \
        the server saw its stream ended: \(stopped); \(proxy.serverBytes >> 10) KiB reached the client; \
        the stream asked for \(messages) messages: \(server.streamProgress)\
        \(server.recorder.lastStreamCompletion.map { "; the handler ended its stream \($0 - left) after the body was left" } ?? "")
        """
      )
    }
  }
}

@Suite("Generated async methods: typed response with headers and trailers")
struct AsyncMetadataTests {
  /// Call options asking the server to echo `tag` in its headers and trailers.
  static func echoing(_ server: TestServer, _ tag: String) -> GRPCCallOptions {
    var options = server.options
    options.initialMetadata.addString(tag, forKey: "x-grpc-test-echo-initial")
    options.initialMetadata.addBinary(Array(tag.utf8), forKey: "x-grpc-test-echo-trailing-bin")
    return options
  }

  static func client(_ server: TestServer) -> TestService {
    TestService(host: server.server.target, callOptions: server.options, channelPool: server.pool)
  }

  @Test("unaryCallResponse: the message, the server's headers and its trailers")
  func unary() async throws {
    try await withTestServer { server in
      let response = try await Self.client(server).unaryCallResponse(
        try unaryRequest(responseBytes: 16),
        callOptions: Self.echoing(server, "unary")
      )
      #expect(try response.message.serializedData().count == 16)
      #expect(Array(response.metadata[stringValues: "x-grpc-test-echo-initial"]) == ["unary"])
      #expect(
        Array(response.trailers[binaryValues: "x-grpc-test-echo-trailing-bin"]) == [
          Array("unary".utf8)
        ]
      )
    }
  }

  @Test("streamingInputCallResponse: the aggregate, the server's headers and its trailers")
  func clientStreaming() async throws {
    try await withTestServer { server in
      let response = try await Self.client(server).streamingInputCallResponse(
        callOptions: Self.echoing(server, "upload")
      ) { writer in
        for size in [3, 5] {
          var request = Grpc_Testing_StreamingInputCallRequest()
          request.payload.body = Data(count: size)
          try await writer.write(request)
        }
      }
      #expect(response.message.aggregatedPayloadSize == 8)
      #expect(Array(response.metadata[stringValues: "x-grpc-test-echo-initial"]) == ["upload"])
      #expect(
        Array(response.trailers[binaryValues: "x-grpc-test-echo-trailing-bin"]) == [
          Array("upload".utf8)
        ]
      )
    }
  }

  @Test("a failed call still throws the GRPCError, with the server's trailers")
  func failure() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_SimpleRequest()
      request.responseStatus.code = 5
      request.responseStatus.message = "missing"
      await #expect {
        try await Self.client(server).unaryCallResponse(
          request,
          callOptions: Self.echoing(server, "lost")
        )
      } throws: { error in
        guard let error = error as? GRPCError else { return false }
        return error.code == .notFound
          && Array(error.trailers[binaryValues: "x-grpc-test-echo-trailing-bin"]) == [
            Array("lost".utf8)
          ]
      }
    }
  }
}
