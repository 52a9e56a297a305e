import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Synchronization
import Testing

@Suite("What interceptors may not change")
struct InterceptorLimitTests {
  @Test(
    "the transport is fixed when the call is made: an interceptor asking for TLS changes nothing"
  )
  func transportIsFixed() async throws {
    try await withTestServer { server in
      var options = server.options
      options.interceptorFactories = [StartRewritingInterceptor.factory { $1.transportType = .tls }]
      let (_, recorder, close) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 20),
        options: options
      )
      // The server speaks plaintext: TLS would have failed the call.
      #expect(close.error == nil)
      #expect(recorder.messages.first?.count == 20)
    }
  }

  @Test("a path an interceptor breaks fails the call with INVALID_ARGUMENT, no crash")
  func brokenPath() async throws {
    try await withTestServer { server in
      var options = server.options
      options.interceptorFactories = [
        StartRewritingInterceptor.factory { request, _ in request.path = "no-slashes" }
      ]
      let (_, recorder, close) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 20),
        options: options
      )
      #expect(close.error?.code == .invalidArgument)
      #expect(close.error?.message.contains("no-slashes") == true)
      #expect(recorder.closeCount == 1)
    }
  }
}
