/// The part of a call's chain not made yet: the remaining interceptor factories, then the
/// transport.
///
/// Interceptors are made one at a time, each when the one above it first passes a request on
/// (see ``GRPCInterceptorManager``), so the chain travels down as this value.
struct InterceptorChain: Sendable {
  var factories: ArraySlice<any GRPCInterceptorFactory>
  /// Makes the bottom element, which runs the RPC and answers to `previous`.
  var transport: @Sendable (_ previous: any ResponseLink) -> any RequestLink

  /// Makes the top element of this part of the chain: the first interceptor a factory agrees to
  /// make, or the transport when none does.
  func makeHead(previous: any ResponseLink) -> any RequestLink {
    var factories = self.factories
    while let factory = factories.popFirst() {
      let rest = InterceptorChain(factories: factories, transport: self.transport)
      let manager = GRPCInterceptorManager(rest: rest, previous: previous)
      if let interceptor = factory.makeInterceptor(manager: manager) {
        manager.attach(interceptor)
        return manager
      }
      manager.discard()
    }
    return self.transport(previous)
  }
}
