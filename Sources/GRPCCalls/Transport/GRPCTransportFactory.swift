public import GRPCCore

/// Makes the transport of a channel, for transports registered by ID
/// (``GRPCTransportRegistry``).
///
/// A channel asks once, when it opens; calls with the same channel key share the transport.
///
/// ```swift
/// GRPCTransportRegistry.shared.register(
///   GRPCClosureTransportFactory { target, options in
///     try HTTP2ClientTransport.Posix(target: .dns(host: "proxy.internal", port: 8443), transportSecurity: .tls)
///   },
///   for: GRPCTransportID("com.example.via-proxy")
/// )
/// ```
public protocol GRPCTransportFactory: Sendable {
  /// Makes a transport for a channel.
  ///
  /// - Parameters:
  ///   - target: The host the calls name, normalized (`name:port`, `ipv4:…`, `unix:…`).
  ///   - options: The options of the call that opened the channel; its channel-level options
  ///     are those of every call that will share it.
  /// - Throws: Any error; the calls fail with `UNAVAILABLE` carrying it.
  func makeTransport(target: String, options: GRPCCallOptions) throws -> any ClientTransport

  /// Interceptors of the transport's own (gRPC Objective-C's `transportInterceptorFactories`):
  /// they run last in the chain of every call on it, after the per-call and global ones, and
  /// see what goes to the transport. None by default.
  var interceptorFactories: [any GRPCInterceptorFactory] { get }
}

extension GRPCTransportFactory {
  public var interceptorFactories: [any GRPCInterceptorFactory] { [] }
}

/// A transport factory made of a closure.
public struct GRPCClosureTransportFactory: GRPCTransportFactory {
  private let make: @Sendable (String, GRPCCallOptions) throws -> any ClientTransport
  public let interceptorFactories: [any GRPCInterceptorFactory]

  /// Creates a factory that calls `make` for each channel, and whose calls run through
  /// `interceptorFactories` last.
  public init(
    interceptorFactories: [any GRPCInterceptorFactory] = [],
    _ make:
      @escaping @Sendable (_ target: String, _ options: GRPCCallOptions) throws ->
      any ClientTransport
  ) {
    self.make = make
    self.interceptorFactories = interceptorFactories
  }

  public func makeTransport(target: String, options: GRPCCallOptions) throws -> any ClientTransport
  {
    try self.make(target, options)
  }
}
