import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import NIOHTTP2
import Testing

/// A server that is not a gRPC server: the call fails with the code gRPC's HTTP-to-status table
/// gives, and a message that says what the peer answered.
@Suite("Peers that are not gRPC servers")
struct NotGRPCServerTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var answer: NotGRPCServer.Answer
    var code: RPCError.Code
    /// What the message must quote of the answer.
    var quoted: [String]
    /// The whole message, where the Errors article quotes it.
    var message: String? = nil

    var testDescription: String {
      switch self.answer {
      case .http1(let line): "HTTP/1.1 '\(line)' → \(self.code)"
      case .http2(let status, let type, _): "HTTP/2 \(status) \(type) → \(self.code)"
      case .refuseThenAnswer(let count), .refuseAtFirstMessageThenAnswer(let count):
        "\(count) refused streams → \(self.code)"
      case .goAway(let code, let debugData): "GOAWAY \(code) \(debugData) → \(self.code)"
      }
    }
  }

  static let cases: [Case] = [
    Case(
      answer: .http2(status: 404, contentType: "text/html", body: "<h1>Not Found</h1>"),
      code: .unimplemented,
      quoted: ["404", "text/html"],
      message:
        "The server answered HTTP status 404 Not Found with content-type 'text/html', not a gRPC response: "
        + "check the host, the port and the method's path, and any proxy in between"
    ),
    Case(
      answer: .http2(status: 401, contentType: "text/plain", body: "no"),
      code: .unauthenticated,
      quoted: ["401"]
    ),
    Case(
      answer: .http2(status: 403, contentType: "text/plain", body: "no"),
      code: .permissionDenied,
      quoted: ["403"]
    ),
    Case(
      answer: .http2(status: 503, contentType: "text/html", body: "busy"),
      code: .unavailable,
      quoted: ["503"]
    ),
    Case(
      answer: .http2(status: 500, contentType: "text/html", body: "oops"),
      code: .unknown,
      quoted: ["500"]
    ),
    Case(
      answer: .http2(status: 200, contentType: "text/html", body: "<html></html>"),
      code: .internalError,
      quoted: ["text/html"],
      message: "The server answered with content-type 'text/html', not 'application/grpc': "
        + "it is not a gRPC server, or a proxy answered in its place"
    ),
    Case(
      answer: .http1(statusLine: "HTTP/1.1 400 Bad Request"),
      code: .unavailable,
      quoted: ["HTTP/1.1 400 Bad Request"],
      message: "The server answered in HTTP/1 ('HTTP/1.1 400 Bad Request'), not HTTP/2: "
        + "it is not a gRPC server, or a proxy in between does not pass HTTP/2 through"
    ),
    // A call the server took (its stream is the GOAWAY's last), then dropped with the
    // connection: the error says what the server said, and what to do about too_many_pings.
    Case(
      answer: .goAway(code: .enhanceYourCalm, debugData: "too_many_pings"),
      code: .unavailable,
      quoted: ["ENHANCE_YOUR_CALM", "too_many_pings"],
      message:
        "The server closed the connection (GOAWAY ENHANCE_YOUR_CALM \"too_many_pings\") before the call completed: "
        + "it allows fewer keepalive pings; raise keepaliveInterval, or ask the server to permit more (grpc-go: keepalive.EnforcementPolicy)"
    ),
    Case(
      answer: .goAway(code: .noError, debugData: "max_age"),
      code: .unavailable,
      quoted: ["NO_ERROR"],
      message:
        "The server closed the connection (GOAWAY NO_ERROR \"max_age\") before the call completed"
    ),
  ]

  @Test(
    "the call fails with the mapped code and quotes the answer (word for word where the docs quote it)",
    arguments: cases,
    RPCPath.allCases
  )
  func answered(_ expected: Case, path: RPCPath) async throws {
    let peer = try await NotGRPCServer.start(answering: expected.answer)
    let (close, recorder) = try await peer.emptyCall(path: path)
    let error = try #require(close.error)
    #expect(error.code == expected.code, "\(error)")
    for quote in expected.quoted {
      #expect(error.message.contains(quote), "'\(error.message)' does not quote \(quote)")
    }
    if let message = expected.message {
      #expect(error.message == message)
    }
    #expect(recorder.closeCount == 1 && recorder.deliveryContractHeld)
    await peer.stop()
  }
}

extension GRPCChannelPool.Config {
  /// The default configuration, sending calls down `path`.
  static func testing(path: RPCPath) -> Self {
    var config = Self.defaults
    config.sendsEveryCallThroughClient = path == .client
    return config
  }
}
