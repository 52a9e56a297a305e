import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCore
import GRPCNIOTransportHTTP2Posix
import GRPCProtoCalls
import GRPCProtobuf
import Testing

/// `GRPCError.googleRPCStatus()`: the server's `google.rpc.Status`, with typed details, from a
/// grpc-swift-2 server whose handlers throw a `GoogleRPCStatus`.
@Suite("Rich error details (google.rpc.Status)")
struct RichErrorTests {
  static let status = GoogleRPCStatus(
    code: .resourceExhausted,
    message: "out of stock",
    details: [
      .errorInfo(
        ErrorDetails.ErrorInfo(reason: "STOCKOUT", domain: "example.com", metadata: ["sku": "42"])
      ),
      .retryInfo(ErrorDetails.RetryInfo(delay: .seconds(2))),
    ]
  )

  /// UnaryCall fails with ``status``; StreamingOutputCall sends one response first.
  struct FailingService: RegistrableRPCService {
    func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
      router.registerHandler(
        forMethod: MethodDescriptor(
          fullyQualifiedService: "grpc.testing.TestService",
          method: "UnaryCall"
        ),
        deserializer: ProtobufDeserializer<Grpc_Testing_SimpleRequest>(),
        serializer: ProtobufSerializer<Grpc_Testing_SimpleResponse>()
      ) { _, _ in
        throw RichErrorTests.status
      }
      router.registerHandler(
        forMethod: MethodDescriptor(
          fullyQualifiedService: "grpc.testing.TestService",
          method: "StreamingOutputCall"
        ),
        deserializer: ProtobufDeserializer<Grpc_Testing_StreamingOutputCallRequest>(),
        serializer: ProtobufSerializer<Grpc_Testing_StreamingOutputCallResponse>()
      ) { _, _ in
        StreamingServerResponse { writer in
          try await writer.write(Grpc_Testing_StreamingOutputCallResponse())
          throw RichErrorTests.status
        }
      }
    }
  }

  /// Runs `body` with a client of a ``FailingService`` server on 127.0.0.1.
  static func withFailingServer(_ body: (GRPCProtoService) async throws -> Void) async throws {
    let transport = HTTP2ServerTransport.Posix(
      address: .ipv4(host: "127.0.0.1", port: 0),
      transportSecurity: .plaintext
    )
    let server = GRPCServer(transport: transport, services: [FailingService()])
    try await withThrowingDiscardingTaskGroup { group in
      group.addTask { try await server.serve() }
      defer { server.beginGracefulShutdown() }
      let port = try #require(try await transport.listeningAddress.ipv4).port
      let pool = GRPCChannelPool()
      defer { pool.disconnectAll() }
      var options = GRPCCallOptions()
      options.transportType = .insecure
      options.timeout = CloseWait.seconds
      let service = GRPCProtoService(
        host: "127.0.0.1:\(port)",
        packageName: "grpc.testing",
        serviceName: "TestService",
        callOptions: options,
        channelPool: pool
      )
      try await body(service)
    }
  }

  static func expectStatus(_ error: GRPCError) throws {
    #expect(error.code == .resourceExhausted && error.message == "out of stock", "\(error)")
    let status = try #require(try error.googleRPCStatus())
    #expect(status == Self.status)
    #expect(status.details.first?.errorInfo?.metadata["sku"] == "42")
    #expect(status.details.last?.retryInfo?.delay == .seconds(2))
  }

  @Test("unary: the thrown GRPCError gives the status and its typed details")
  func unary() async throws {
    try await Self.withFailingServer { service in
      let error = await #expect(throws: GRPCError.self) {
        try await service.unary(
          method: "UnaryCall",
          request: Grpc_Testing_SimpleRequest(),
          responseType: Grpc_Testing_SimpleResponse.self
        )
      }
      try Self.expectStatus(try #require(error))
    }
  }

  @Test("mid-stream: after a response, the status ends the stream with its details")
  func midStream() async throws {
    try await Self.withFailingServer { service in
      let received = LockedValue(0)
      let error = await #expect(throws: GRPCError.self) {
        try await service.serverStreaming(
          method: "StreamingOutputCall",
          request: Grpc_Testing_StreamingOutputCallRequest(),
          responseType: Grpc_Testing_StreamingOutputCallResponse.self
        ) { responses in
          for try await _ in responses { received.withLock { $0 += 1 } }
        }
      }
      #expect(received.withLock { $0 } == 1)
      try Self.expectStatus(try #require(error))
    }
  }

  @Test("no details: nil; details that are not a google.rpc.Status: INTERNAL, saying so")
  func absentAndMalformed() throws {
    #expect(try GRPCError(code: .notFound, message: "missing").googleRPCStatus() == nil)
    var trailers = Metadata()
    trailers.addBinary([0xff, 0xff, 0xff], forKey: "grpc-status-details-bin")
    let malformed = GRPCError(code: .notFound, message: "missing", trailers: trailers)
    #expect {
      try malformed.googleRPCStatus()
    } throws: { error in
      (error as? GRPCError)?.code == .internalError
        && (error as? GRPCError)?.message.hasPrefix(
          "The server's grpc-status-details-bin trailer is not a valid google.rpc.Status"
        ) == true
    }
  }

  @Test(
    "as NSError (the v1 API's habit): the same status from userInfo, whether the trailer came as bytes or as base64 text"
  )
  func bridgedToNSError() throws {
    let bytes: [UInt8] = try Self.status.serializedBytes()
    var asBytes = Metadata()
    asBytes.addBinary(bytes, forKey: "grpc-status-details-bin")
    var asText = Metadata()
    asText.addString(Data(bytes).base64EncodedString(), forKey: "grpc-status-details-bin")
    for trailers in [asBytes, asText] {
      let error =
        GRPCError(code: .resourceExhausted, message: "out of stock", trailers: trailers) as NSError
      #expect(try error.googleRPCStatus() == Self.status)
      let bridged = error.userInfo[GRPCError.trailersKey] as? [String: Any]
      #expect(bridged?["grpc-status-details-bin"] as? Data == Data(bytes))
    }
    #expect(
      try (GRPCError(code: .notFound, message: "missing") as NSError).googleRPCStatus() == nil
    )
    #expect(try NSError(domain: "other", code: 8).googleRPCStatus() == nil)
  }
}
