import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@Suite("Errors a call closes with")
struct ErrorTests {
  @Test("timeout 1 ms on an idle FullDuplexCall: DEADLINE_EXCEEDED, no message")
  func deadline() async throws {
    try await withTestServer { server in
      var options = server.options
      options.timeout = 0.001
      let (call, recorder) = try server.call("FullDuplexCall", options: options)
      call.start()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .deadlineExceeded)
      #expect(close.trailers == nil)
      #expect(recorder.messages.isEmpty)
    }
  }

  @Test("an echoed status becomes a GRPCError with that code and message")
  func echoedStatus() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_SimpleRequest()
      request.responseStatus.code = 2
      request.responseStatus.message = "test status message"
      let close = try await server.complete("UnaryCall", request).close
      let error = try #require(close.error)
      #expect(error.code == .unknown)
      #expect(error.code.rawValue == 2)
      #expect(error.message == "test status message")
      // The server's status came with trailers (empty ones): they are not nil.
      #expect(close.trailers != nil)
    }
  }

  @Test("an unknown method: UNIMPLEMENTED (12)")
  func unknownMethod() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("NoSuchMethod")
      call.start()
      call.writeData(Data())
      call.finish()
      let error = try #require(await recorder.waitForClose()?.error)
      #expect(error.code == .unimplemented)
      #expect(error.code.rawValue == 12)
    }
  }

  @Test("nothing listening on the port: UNAVAILABLE (14), promptly")
  func unreachable() async throws {
    // Take a port that was just free: start a server, note its port, stop it.
    let closed = try await InteropServer.start(host: "127.0.0.1", port: 0)
    let port = closed.port
    await closed.stopAndWait()

    var options = GRPCCallOptions()
    options.transportType = .insecure
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }
    let recorder = CallRecorder()
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(
        host: "127.0.0.1:\(port)",
        path: "/grpc.testing.TestService/EmptyCall"
      ),
      responseHandler: recorder,
      callOptions: options,
      channelPool: pool
    )
    call.start()
    call.writeData(Data())
    call.finish()
    // "Promptly": the call has no deadline, so only the refused connection can end it.
    let close = try #require(await recorder.waitForClose())
    #expect(close.error?.code == .unavailable)
    #expect(close.error?.code.rawValue == 14)
    #expect(close.trailers == nil)
  }

  @Test("a malformed host fails the call with INVALID_ARGUMENT naming it")
  func malformedHost() async throws {
    let recorder = CallRecorder()
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(host: "host:notaport", path: "/a.B/C"),
      responseHandler: recorder,
      channelPool: GRPCChannelPool()
    )
    call.start()
    let error = try #require(await recorder.waitForClose()?.error)
    #expect(error.code == .invalidArgument)
    #expect(error.message.contains("host:notaport"))
  }

  @Test("writing something that is not bytes fails the call with INTERNAL naming the type")
  func nonBytesWrite() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("FullDuplexCall")
      call.start()
      call.writeData(42)
      let error = try #require(await recorder.waitForClose()?.error)
      #expect(error.code == .internalError)
      #expect(error.message.contains("Int"))
      try await CancellationTests.expectNothingMoreArrives(recorder)
    }
  }

  @Test(
    "GRPCError bridges to NSError as gRPC Objective-C's errors: domain, code, and what userInfo holds"
  )
  func nsErrorBridge() throws {
    var headers = Metadata()
    headers.addString("first", forKey: "x-echo")
    headers.addString("second", forKey: "x-echo")
    var trailers = Metadata()
    trailers.addBinary([1, 2], forKey: "x-trailer-bin")
    let error = GRPCError(
      code: .unavailable,
      message: "down",
      headers: headers,
      trailers: trailers,
      debugMessage: "the server restarted"
    )
    let nsError = error as NSError
    #expect(nsError.domain == "io.grpc")
    #expect(nsError.code == 14)
    #expect(nsError.localizedDescription == "down")
    #expect(nsError.userInfo[NSDebugDescriptionErrorKey] as? String == "the server restarted")
    let sentHeaders = try #require(nsError.userInfo["io.grpc.HeadersKey"] as? [String: Any])
    #expect(sentHeaders["x-echo"] as? String == "first")
    let sentTrailers = try #require(nsError.userInfo[GRPCError.trailersKey] as? [String: Any])
    #expect(sentTrailers["x-trailer-bin"] as? Data == Data([1, 2]))
    #expect(String(describing: error) == "unavailable (14): down. the server restarted")

    // No message: no localized description of ours; no metadata: no keys for it; the cause
    // describes the failure when there is no debug message.
    let bare =
      GRPCError(code: .internalError, message: "", cause: CocoaError(.fileNoSuchFile)) as NSError
    #expect(bare.userInfo[NSLocalizedDescriptionKey] == nil)
    #expect(bare.userInfo["io.grpc.HeadersKey"] == nil)
    #expect(bare.userInfo["io.grpc.TrailersKey"] == nil)
    #expect(bare.userInfo[NSDebugDescriptionErrorKey] as? String != nil)
  }
}
