/// The part of a call's chain not made yet: the remaining interceptor factories, then the
/// transport.
///
/// Interceptors are made one at a time, each when the one above it first passes a request on
/// (see ``GRPCInterceptorManager``), so the chain travels down as this value.
struct InterceptorChain: Sendable {
  var factories: ArraySlice<any GRPCInterceptorFactory>
  /// What the bottom element, which runs the RPC, is made from.
  var runner: Runner

  /// The bottom element's settings: a value rather than a closure, which would cost the call an
  /// allocation for its captures.
  struct Runner: Sendable {
    var pool: GRPCChannelPool
    var transportType: GRPCTransportType
    var transport: GRPCTransportID?

    /// The bottom element, answering to `previous`.
    func make(previous: any ResponseLink) -> any RequestLink {
      GRPCCall2Internal(
        pool: self.pool,
        transportType: self.transportType,
        transport: self.transport,
        previous: previous
      )
    }
  }

  /// Makes the top element of this part of the chain: the first interceptor a factory agrees to
  /// make, or the transport when none does.
  func makeHead(previous: any ResponseLink) -> any RequestLink {
    var factories = self.factories
    while let factory = factories.popFirst() {
      let rest = InterceptorChain(factories: factories, runner: self.runner)
      let manager = GRPCInterceptorManager(rest: rest, previous: previous)
      if let interceptor = factory.makeInterceptor(manager: manager) {
        manager.attach(interceptor)
        return manager
      }
      manager.discard()
    }
    return self.runner.make(previous: previous)
  }
}
