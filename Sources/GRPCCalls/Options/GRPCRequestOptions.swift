internal import GRPCCallsInput
internal import GRPCCore

/// Where a call goes: the server, the method and the method's safety.
///
/// Generated services fill this in; raw callers build it themselves.
public struct GRPCRequestOptions: Hashable, Sendable {
  /// The server: `name[:port]` (no port means `:443`), or a target with a scheme: `dns:`,
  /// `ipv4:`, `ipv6:` or `unix:`.
  public var host: String

  /// The method's path, `/package.Service/Method`.
  public var path: String

  /// Whether the method is idempotent or has no side effects.
  public var safety: GRPCCallSafety

  /// Creates request options.
  ///
  /// - Parameters:
  ///   - host: The server, for example `"api.example.com"` or `"127.0.0.1:50051"`.
  ///   - path: The method's path, for example `"/grpc.testing.TestService/UnaryCall"`.
  ///   - safety: The method's safety; ``GRPCCallSafety/default`` unless the method is known to be
  ///     idempotent or cacheable.
  /// - Throws: ``GRPCError`` with code `INVALID_ARGUMENT` when `host` is empty, or when `path`
  ///   is not of the form `/service/method`.
  public init(host: String, path: String, safety: GRPCCallSafety = .default) throws {
    guard !host.isEmpty else {
      throw GRPCError(code: .invalidArgument, message: "GRPCRequestOptions: host must not be empty")
    }
    // Parsed once per method: the call that follows finds its descriptor made.
    guard (try? MethodPath.descriptor(for: path)) != nil else {
      throw GRPCError(
        code: .invalidArgument,
        message: path.isEmpty
          ? "GRPCRequestOptions: path must not be empty"
          : "GRPCRequestOptions: path '\(path)' is not of the form /service/method"
      )
    }
    self.host = host
    self.path = path
    self.safety = safety
  }

  /// Request options that are checked only when the call starts, where a bad host or path
  /// fails the call with `INVALID_ARGUMENT`: for layers (the proto services) whose callers
  /// expect a call object, not a throw.
  package init(unchecked host: String, path: String, safety: GRPCCallSafety) {
    self.host = host
    self.path = path
    self.safety = safety
  }
}

/// The safety of a method, as declared in its proto (`idempotency_level`).
public struct GRPCCallSafety: Hashable, Sendable, CustomStringConvertible {
  private enum Wrapped: Hashable, Sendable {
    case `default`
    case idempotent
    case cacheable
  }

  private let wrapped: Wrapped

  /// A method that may have side effects.
  public static let `default` = Self(wrapped: .default)
  /// A method that may be safely retried: repeating it has the effect of doing it once.
  public static let idempotent = Self(wrapped: .idempotent)
  /// A method with no side effects, whose response may be cached.
  public static let cacheable = Self(wrapped: .cacheable)

  public var description: String {
    switch self.wrapped {
    case .default: "default"
    case .idempotent: "idempotent"
    case .cacheable: "cacheable"
    }
  }
}
