extension GRPCCall2 {
  /// The global interceptors, in the order they were registered.
  private static let globalFactories = LockedValue<[any GRPCInterceptorFactory]>([])

  /// Adds an interceptor to every call made from now on (gRFC L55).
  ///
  /// Global interceptors run after a call's own ``GRPCCallOptions/interceptorFactories``, in the
  /// order they were registered; a call keeps the list it was made with. Unlike gRPC
  /// Objective-C, which allows one global interceptor per process and raises on a second,
  /// registrations add up, so independent components (logging, metrics) can each install one.
  /// A factory may return `nil` for calls it should not take part in.
  public static func registerGlobalInterceptor(_ factory: any GRPCInterceptorFactory) {
    Self.globalFactories.withLock { $0.append(factory) }
  }

  /// Removes every global interceptor, for calls made from now on: for tests, and for
  /// components that shut down.
  public static func removeAllGlobalInterceptors() {
    Self.globalFactories.withLock { $0.removeAll() }
  }

  /// The global interceptors a call made now gets.
  public static var globalInterceptors: [any GRPCInterceptorFactory] {
    Self.globalFactories.withLock { $0 }
  }
}
