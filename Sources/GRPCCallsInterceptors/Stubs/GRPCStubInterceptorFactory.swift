public import GRPCCalls

/// Answers calls with ``GRPCStub``s instead of a server, so an app's code can be tested
/// against a generated client with no server at all.
///
/// A call whose path has a stub never reaches the network: the stub's headers, messages
/// (after their pauses) and status come back as a server's would, in the call's usual order and
/// within its flow control. A call without a stub fails with `UNIMPLEMENTED` (12), or passes
/// through to the real transport with ``Unmatched/passThrough``. ``requests`` lists every call
/// the stubs saw.
///
/// ```swift
/// let stubs = GRPCStubInterceptorFactory(stubs: [
///   .unary("/grpc.testing.TestService/UnaryCall") { (request: Grpc_Testing_SimpleRequest) in
///     Grpc_Testing_SimpleResponse.with { $0.username = "stub" }
///   }
/// ])
/// var options = GRPCCallOptions()
/// options.interceptorFactories = [stubs]
/// let client = TestService(host: "unused:443", callOptions: options)
/// let response = try await client.unaryCall(request)  // "stub", no connection made
/// ```
public struct GRPCStubInterceptorFactory: GRPCInterceptorFactory {
  /// What happens to a call that no stub matches.
  public struct Unmatched: Sendable, Hashable {
    private enum Wrapped: Hashable, Sendable {
      case fail
      case passThrough
    }

    private let wrapped: Wrapped

    /// The call fails with `UNIMPLEMENTED` (12), naming the path: a test never reaches a real
    /// server by mistake.
    public static let fail = Unmatched(wrapped: .fail)
    /// The call goes on to the real transport.
    public static let passThrough = Unmatched(wrapped: .passThrough)
  }

  /// How unmatched calls are treated.
  public struct Config: Sendable {
    /// What happens to a call that no stub matches.
    public var unmatched: Unmatched

    /// Unmatched calls fail.
    public static var defaults: Config { Config(unmatched: .fail) }
  }

  public let config: Config
  let stubs: [String: GRPCStub]
  let log = StubRequestLog()

  /// - Parameters:
  ///   - config: How unmatched calls are treated.
  ///   - stubs: The answers, one per path; a later stub for the same path replaces an earlier one.
  public init(config: Config = .defaults, stubs: [GRPCStub]) {
    self.config = config
    self.stubs = Dictionary(stubs.map { ($0.path, $0) }, uniquingKeysWith: { _, later in later })
  }

  /// Every call the interceptors saw, in the order their requests completed.
  public var requests: [GRPCStubbedRequest] { self.log.all }

  public func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor? {
    GRPCStubInterceptor(manager: manager, factory: self)
  }
}
