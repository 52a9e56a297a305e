internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix

/// Name resolution that keeps a channel from reconnecting after an idle connection's GOAWAY.
///
/// After a GOAWAY the transport (grpc-swift-nio-transport 2.9) asks its resolver for a new
/// result, and its pick-first balancer opens a new connection for every result, even an
/// unchanged one (it never stores the endpoint it compares with). A server that closes idle
/// connections (`MaxConnectionIdle`) so made the channel reconnect at once, with no call
/// waiting, once per idle period, where gRPC core and grpc-go stay idle until a call comes
/// (gRFC A8 and A9: a channel left idle connects for its next call).
///
/// So the resolver the transport gets is push-based, and the transport never asks it again: it
/// answers once at the start, and then on request (``GoAwayRecorder`` tells it what happened
/// to each connection):
/// - when the first GOAWAY comes to a connection that calls are using (a maximum connection
///   age), with a new result whatever it is: as when the transport resolved again, the balancer
///   opens the successor they need while they finish;
/// - when an established connection closed without a GOAWAY (the transport reconnects it by
///   itself), only if the result changed, so that a server that moved is found.
///
/// An idle connection's GOAWAY asks for nothing: the connection closes, the channel goes idle
/// and connects again for its next call.
///
/// Drop it when the transport's balancer stays idle after a GOAWAY.
final class ReconnectOnDemand: Sendable {
  /// Why the channel resolves again.
  enum Request: Sendable {
    /// A connection that calls are using is going away: a new result, so that the balancer
    /// opens its successor.
    case successor
    /// A connection broke: a new result only if the names resolve differently now.
    case changes
  }

  private let state = LockedValue(State())

  private struct State {
    /// The resolver's iterator, waiting for a request.
    var waiter: CheckedContinuation<Request, any Error>?
    /// A request no iterator has taken yet (``Request/successor`` wins over the other).
    var pending: Request?
    var cancelled = false
  }

  /// Asks the resolver for a new result.
  func request(_ request: Request) {
    let waiter = self.state.withLock { state -> CheckedContinuation<Request, any Error>? in
      guard let waiter = state.waiter else {
        state.pending = state.pending == .successor ? .successor : request
        return nil
      }
      state.waiter = nil
      return waiter
    }
    waiter?.resume(returning: request)
  }

  /// Waits for a request; throws `CancellationError` when the channel stops resolving.
  fileprivate func nextRequest() async throws -> Request {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Request, any Error>) in
        enum Now { case wait, go(Request), stop }
        let now = self.state.withLock { state -> Now in
          if state.cancelled { return .stop }
          if let pending = state.pending {
            state.pending = nil
            return .go(pending)
          }
          state.waiter = continuation
          return .wait
        }
        switch now {
        case .wait: break
        case .go(let request): continuation.resume(returning: request)
        case .stop: continuation.resume(throwing: CancellationError())
        }
      }
    } onCancel: {
      let waiter = self.state.withLock { state -> CheckedContinuation<Request, any Error>? in
        state.cancelled = true
        defer { state.waiter = nil }
        return state.waiter
      }
      waiter?.resume(throwing: CancellationError())
    }
  }

  /// The transport's target: `inner`, resolved again on request.
  struct Target: ResolvableTarget {
    var inner: any ResolvableTarget
    var demand: ReconnectOnDemand
  }

  /// Registered in the transport's resolver registry, for ``Target``.
  struct Factory: NameResolverFactory {
    func resolver(for target: Target) -> NameResolver {
      guard let inner = NameResolverRegistry.defaults.makeResolver(for: target.inner) else {
        // Not reached: targets come from `HostTarget`, which the default registry resolves.
        let failure = RPCError(code: .unavailable, message: "No name resolver for \(target.inner)")
        return NameResolver(
          names: RPCAsyncSequence(wrapping: AsyncThrowingStream { $0.finish(throwing: failure) }),
          updateMode: .push
        )
      }
      // A resolver that pushes its results already gives new ones only when they change.
      guard inner.updateMode == .pull else { return inner }
      return NameResolver(
        names: RPCAsyncSequence(wrapping: Results(inner: inner.names, demand: target.demand)),
        updateMode: .push,
        authority: inner.authority
      )
    }
  }

  /// The inner resolver's results: the first at once, then as requested.
  private struct Results: AsyncSequence, Sendable {
    typealias Element = NameResolutionResult
    let inner: RPCAsyncSequence<NameResolutionResult, any Error>
    let demand: ReconnectOnDemand

    struct AsyncIterator: AsyncIteratorProtocol {
      var inner: RPCAsyncSequence<NameResolutionResult, any Error>.AsyncIterator
      let demand: ReconnectOnDemand
      /// What this iterator answered last; a new iterator (the first, or one after a failed
      /// resolution) answers at once.
      var last: NameResolutionResult?

      mutating func next() async throws -> NameResolutionResult? {
        while true {
          let request = self.last == nil ? Request.successor : try await self.demand.nextRequest()
          guard let result = try await self.inner.next() else { return nil }
          if request == .changes, result == self.last { continue }
          self.last = result
          return result
        }
      }
    }

    func makeAsyncIterator() -> AsyncIterator {
      AsyncIterator(inner: self.inner.makeAsyncIterator(), demand: self.demand)
    }
  }
}
