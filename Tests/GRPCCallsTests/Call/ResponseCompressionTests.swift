import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@Suite("Compressed responses to a client that sends plain requests")
struct ResponseCompressionTests {
  /// The core's server compresses every response with the first algorithm the client accepts
  /// and it takes; a client must accept gzip and deflate whatever it does to its own requests.
  @Test(
    "default options (no request compression): a compressing server's responses arrive whole",
    arguments: [true, false]
  )
  func compressedResponses(serverCompresses: Bool) async throws {
    try await withTestServer(compression: serverCompresses) { server in
      #expect(server.options.compressionAlgorithm == .none)
      for size in [16, 64 * 1024, 2 * 1024 * 1024] {
        let (_, recorder, close) = try await server.complete(
          "UnaryCall",
          try unaryRequest(responseBytes: size)
        )
        #expect(close.error == nil, "\(String(describing: close.error))")
        #expect(recorder.messages.map(\.count) == [size])
        let encoding =
          recorder.initialMetadata.map { Array($0[stringValues: "grpc-encoding"]) } ?? []
        #expect(
          encoding == (serverCompresses ? ["deflate"] : []),
          "response grpc-encoding \(encoding)"
        )
      }
    }
  }

  @Test("the response size limit applies to the decompressed message")
  func limitCountsDecompressedBytes() async throws {
    try await withTestServer { server in
      var options = server.options
      options.responseSizeLimit = 16 * 1024
      // 64 KiB of zeros compress to well under 16 KiB on the wire.
      let (_, _, close) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 64 * 1024),
        options: options
      )
      let error = try #require(close.error)
      #expect(error.code == .resourceExhausted, "\(error)")
      #expect(
        error.message == "Received message larger than max (over 16384 once decompressed vs. 16384)"
      )
      #expect(
        error.debugMessage?.hasPrefix("The compressed response, once decompressed, exceeds") == true
      )
    }
  }

  @Test(
    "grpc.compression_enabled_algorithms_bitset = 1 (identity only): the server answers uncompressed"
  )
  func identityOnly() async throws {
    try await withTestServer { server in
      var options = server.options
      options.additionalChannelArgs = ["grpc.compression_enabled_algorithms_bitset": .integer(1)]
      let (_, recorder, close) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 64 * 1024),
        options: options
      )
      #expect(close.error == nil, "\(String(describing: close.error))")
      #expect(recorder.initialMetadata.map { Array($0[stringValues: "grpc-encoding"]) } == [])
      #expect(recorder.messages.map(\.count) == [64 * 1024])
    }
  }
}
