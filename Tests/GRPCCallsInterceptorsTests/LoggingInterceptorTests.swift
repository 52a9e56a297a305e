import Foundation
import GRPCCalls
import GRPCCallsInterceptors
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Logging
import Testing

@Suite("Logging interceptor over loopback")
struct LoggingInterceptorTests {
  /// Options that log to `logs` at `level`, with a token and headers to redact.
  static func options(
    _ server: TestServer,
    logs: CapturedLogs,
    level: Logger.Level
  ) -> GRPCCallOptions {
    var logger = logs.logger
    logger.logLevel = level
    var options = server.options
    options.interceptorFactories = [GRPCLoggingInterceptorFactory(logger: logger)]
    options.initialMetadata.addString("Bearer very-secret-token", forKey: "authorization")
    options.initialMetadata.addString("also-secret", forKey: "x-api-key")
    options.initialMetadata.addString("visible", forKey: "x-request-tag")
    options.logContext = ["app.user": "u-17"]
    options.timeout = 120
    return options
  }

  @Test(
    "start and close records carry the method, metadata, counts and duration; secrets never appear"
  )
  func startAndClose() async throws {
    try await withTestServer { server in
      let logs = CapturedLogs()
      let options = Self.options(server, logs: logs, level: .debug)
      let (_, recorder, close) = try await server.complete(
        "UnaryCall",
        try InteropRequests.unary(responseBytes: 314),
        options: options
      )
      #expect(close.error == nil)
      #expect(recorder.messages.count == 1)

      let records = logs.all
      let start = try #require(records.first { $0.message == "RPC started" })
      #expect(start.level == .debug)
      #expect(start.metadata["grpc.method"] == "grpc.testing.TestService/UnaryCall")
      #expect(start.metadata["grpc.host"] == server.server.target)
      #expect(start.metadata["grpc.deadline_s"] == "120.0")
      #expect(start.metadata["app.user"] == "u-17")
      let sentMetadata = try #require(start.metadata["grpc.request_metadata"])
      #expect(sentMetadata.contains("visible"))
      #expect(sentMetadata.contains("<redacted>"))

      let end = try #require(records.first { $0.message == "RPC finished" })
      #expect(end.metadata["grpc.code"] == "0")
      #expect(end.metadata["grpc.status"] == "ok")
      #expect(end.metadata["grpc.messages_sent"] == "1")
      #expect(end.metadata["grpc.messages_received"] == "1")
      // `responseBytes` is the serialized size of the response message.
      #expect(end.metadata["grpc.bytes_received"] == "314")
      #expect(Double(end.metadata["grpc.duration_ms"] ?? "") != nil)
      #expect(end.metadata["app.user"] == "u-17")

      for record in records {
        let text = record.message + record.metadata.values.joined()
        #expect(!text.contains("very-secret-token"), "\(record)")
        #expect(!text.contains("also-secret"), "\(record)")
      }
      // Per-message records only at .trace.
      #expect(!records.contains { $0.message.hasSuffix("message") })
    }
  }

  @Test("at .trace each message is logged, cut at the configured length")
  func messagesAtTrace() async throws {
    try await withTestServer { server in
      let logs = CapturedLogs()
      let options = Self.options(server, logs: logs, level: .trace)
      _ = try await server.complete(
        "UnaryCall",
        try InteropRequests.unary(responseBytes: 10),
        options: options
      )
      let messages = logs.all.filter { $0.message.hasSuffix("message") }
      #expect(messages.map(\.message) == ["RPC request message", "RPC response message"])
      #expect(messages.allSatisfy { $0.level == .trace })
      #expect(messages.allSatisfy { $0.metadata["grpc.message_text"]?.hasSuffix("bytes>") == true })
    }
  }

  @Test("a failed call is logged at the failure level with its code and message")
  func failure() async throws {
    try await withTestServer { server in
      let logs = CapturedLogs()
      let options = Self.options(server, logs: logs, level: .debug)
      var request = try InteropRequests.unary(responseBytes: 10)
      request.responseStatus.code = 2
      request.responseStatus.message = "planned failure"
      let (_, _, close) = try await server.complete("UnaryCall", request, options: options)
      #expect(close.error?.code == .unknown)
      let end = try #require(logs.all.first { $0.message == "RPC failed" })
      #expect(end.level == .info)
      #expect(end.metadata["grpc.code"] == "2")
      #expect(end.metadata["grpc.message"] == "planned failure")
    }
  }
}
