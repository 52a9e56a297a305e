/// Makes the interceptor for one call (gRFC L50).
///
/// A call asks each factory in ``GRPCCallOptions/interceptorFactories`` (then each global one)
/// for an interceptor, when the interceptor above it first passes a request on. Returning `nil`
/// leaves the factory out of that call. State shared across calls belongs in the factory; state
/// of one call belongs in the interceptor it makes.
///
/// ```swift
/// struct LoggingInterceptorFactory: GRPCInterceptorFactory {
///   func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor? {
///     LoggingInterceptor(manager: manager)
///   }
/// }
/// ```
public protocol GRPCInterceptorFactory: Sendable {
  /// Makes the interceptor for a call, or `nil` to take no part in it.
  ///
  /// - Parameter manager: The manager the interceptor forwards events through; pass it to
  ///   ``GRPCInterceptor/init(manager:dispatchQueue:executesInline:)``.
  func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor?
}

/// A factory made of a closure, for interceptors that need no factory type of their own.
///
/// ```swift
/// options.interceptorFactories = [
///   GRPCClosureInterceptorFactory { manager in LoggingInterceptor(manager: manager) }
/// ]
/// ```
public struct GRPCClosureInterceptorFactory: GRPCInterceptorFactory {
  private let make: @Sendable (GRPCInterceptorManager) -> GRPCInterceptor?

  /// Creates a factory that calls `make` for each call.
  public init(_ make: @escaping @Sendable (GRPCInterceptorManager) -> GRPCInterceptor?) {
    self.make = make
  }

  public func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor? {
    self.make(manager)
  }
}
