import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// Against an uncompressed server, so that each limit meets a known size (a compressed response
/// is limited by its decompressed size: `ResponseCompressionTests`).
@Suite("Response size limit")
struct ResponseSizeLimitTests {
  static let mebibyte = 1024 * 1024

  /// Runs a UnaryCall whose response is `responseBytes` long, under `limit` (nil: default).
  private func unary(
    responseBytes: Int,
    limit: Int?,
    on server: TestServer
  ) async throws -> (trailers: Metadata?, error: GRPCError?, recorder: CallRecorder) {
    var options = server.options
    if let limit { options.responseSizeLimit = limit }
    let request = try unaryRequest(responseBytes: responseBytes)
    let (_, recorder, close) = try await server.complete("UnaryCall", request, options: options)
    return (close.trailers, close.error, recorder)
  }

  @Test("a response of exactly 4 MiB is accepted by default")
  func exactlyDefault() async throws {
    try await withTestServer(compression: false) { server in
      let result = try await self.unary(responseBytes: 4 * Self.mebibyte, limit: nil, on: server)
      #expect(result.error == nil)
      #expect(result.recorder.messages.first?.count == 4 * Self.mebibyte)
    }
  }

  @Test(
    "4 MiB + 1: RESOURCE_EXHAUSTED with gRPC core's message, no trailers, what to do in the debug message"
  )
  func oneOver() async throws {
    try await withTestServer(compression: false) { server in
      let result = try await self.unary(
        responseBytes: 4 * Self.mebibyte + 1,
        limit: nil,
        on: server
      )
      let error = try #require(result.error)
      #expect(error.code == .resourceExhausted)
      #expect(error.code.rawValue == 8)
      #expect(error.message == "Received message larger than max (4194305 vs. 4194304)")
      #expect(
        error.debugMessage
          == "The response of 4194305 bytes exceeds the response size limit of 4194304 bytes: raise "
          + "GRPCCallOptions.responseSizeLimit (or the host's setResponseSizeLimit), or the service "
          + "config's maxResponseMessageBytes for the method if it sets one, if such responses are expected"
      )
      #expect(result.recorder.messages.isEmpty)
      // It failed on this side after the headers: no trailers came.
      #expect(result.recorder.initialMetadata != nil)
      #expect(result.trailers == nil)
    }
  }

  @Test("a 6 MiB limit accepts a 5 MiB response")
  func raisedLimit() async throws {
    try await withTestServer(compression: false) { server in
      let result = try await self.unary(
        responseBytes: 5 * Self.mebibyte,
        limit: 6 * Self.mebibyte,
        on: server
      )
      #expect(result.error == nil)
      #expect(result.recorder.messages.first?.count == 5 * Self.mebibyte)
    }
  }

  @Test("a 100-byte limit rejects a 200-byte response with RESOURCE_EXHAUSTED")
  func loweredLimit() async throws {
    try await withTestServer(compression: false) { server in
      let result = try await self.unary(responseBytes: 200, limit: 100, on: server)
      let error = try #require(result.error)
      #expect(error.code == .resourceExhausted)
      #expect(error.message.contains("200"))
      #expect(error.message.contains("100"))
    }
  }
}
