public import GRPCCalls
public import GRPCCore

/// How a stubbed call answers: headers, then messages (with optional pauses between them),
/// then trailers and a status.
public struct GRPCStubResponse: Sendable {
  /// One step of the answer.
  public struct Step: Sendable {
    enum Kind: Sendable {
      case message(any Sendable)
      case pause(Duration)
    }

    let kind: Kind

    /// A response message: the typed message for calls with a marshaller (the generated
    /// clients), `Data` for calls without one.
    public static func message(_ message: any Sendable) -> Step { Step(kind: .message(message)) }

    /// A pause before the next step, as a slow server would take.
    public static func pause(_ duration: Duration) -> Step { Step(kind: .pause(duration)) }
  }

  /// The response headers.
  public var headers: Metadata
  /// The messages and pauses, in order.
  public var steps: [Step]
  /// The trailers.
  public var trailers: Metadata
  /// The status the call ends with; `nil` for OK.
  public var error: GRPCError?

  /// - Parameters:
  ///   - headers: The response headers.
  ///   - steps: The messages and pauses, in order.
  ///   - trailers: The trailers.
  ///   - error: The status the call ends with; `nil` for OK.
  public init(
    headers: Metadata = [:],
    steps: [Step] = [],
    trailers: Metadata = [:],
    error: GRPCError? = nil
  ) {
    self.headers = headers
    self.steps = steps
    self.trailers = trailers
    self.error = error
  }

  /// One message and OK.
  public static func message(_ message: any Sendable) -> GRPCStubResponse {
    GRPCStubResponse(steps: [.message(message)])
  }

  /// No message, the call fails with `error`.
  public static func failure(_ error: GRPCError) -> GRPCStubResponse {
    GRPCStubResponse(error: error)
  }
}

/// A canned answer for one method, for ``GRPCStubInterceptorFactory``.
///
/// The stub answers once the call has half-closed, with every request message it sent:
/// unary, server-streaming, client-streaming calls, and bidirectional ones that send all their
/// requests before reading.
public struct GRPCStub: Sendable {
  /// The method's path, `/package.Service/Method`.
  public let path: String
  let answer:
    @Sendable (_ requests: [any Sendable], _ metadata: Metadata) async throws -> GRPCStubResponse

  /// A stub that works out its answer from the requests and the request metadata.
  ///
  /// A `GRPCError` thrown by `answer` ends the call with that status; another error
  /// ends it with `UNKNOWN` (2) and the error's description.
  public init(
    path: String,
    answer:
      @escaping @Sendable (_ requests: [any Sendable], _ metadata: Metadata) async throws ->
      GRPCStubResponse
  ) {
    self.path = path
    self.answer = answer
  }

  /// Always answers with `response`.
  public static func reply(_ path: String, with response: GRPCStubResponse) -> GRPCStub {
    GRPCStub(path: path) { _, _ in response }
  }

  /// Answers a unary or client-streaming call: `handler` gets the first request, typed, and
  /// returns the one response.
  ///
  /// A request of another type ends the call with `INTERNAL` (13) naming both types.
  public static func unary<Request: Sendable, Response: Sendable>(
    _ path: String,
    _ handler: @escaping @Sendable (Request) async throws -> Response
  ) -> GRPCStub {
    GRPCStub(path: path) { requests, _ in
      .message(try await handler(try Self.first(requests, as: Request.self, path: path)))
    }
  }

  /// Answers a server-streaming call: `handler` gets the first request, typed, and returns the
  /// response script (messages, pauses, a final status).
  public static func serverStreaming<Request: Sendable>(
    _ path: String,
    _ handler: @escaping @Sendable (Request) async throws -> GRPCStubResponse
  ) -> GRPCStub {
    GRPCStub(path: path) { requests, _ in
      try await handler(try Self.first(requests, as: Request.self, path: path))
    }
  }

  static func first<Request>(
    _ requests: [any Sendable],
    as type: Request.Type,
    path: String
  ) throws -> Request {
    guard let first = requests.first else {
      throw GRPCError(code: .internalError, message: "The stub for \(path) got no request message")
    }
    guard let typed = first as? Request else {
      throw GRPCError(
        code: .internalError,
        message:
          "The stub for \(path) expects \(Request.self) but the call sent \(Swift.type(of: first)): give the stub the call's request type"
      )
    }
    return typed
  }
}
