internal import Dispatch
internal import Foundation
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix

/// Name resolution that keeps a channel from reconnecting after an idle connection's GOAWAY.
///
/// After a GOAWAY the transport (grpc-swift-nio-transport 2.9) asks its resolver for a new
/// result, and its pick-first balancer opens a new connection for every result, even an
/// unchanged one (it never stores the endpoint it compares with). A server that closes idle
/// connections (`MaxConnectionIdle`) so made the channel reconnect at once, with no call
/// waiting, once per idle period, where gRPC core and grpc-go stay idle until a call comes.
///
/// So the resolver the transport gets is push-based, and the transport never asks it again: it
/// answers once at the start, and then whenever the transport would have asked, except for an
/// idle connection's GOAWAY. ``GoAwayRecorder`` and each connection's close tell it when:
/// - the first GOAWAY comes to a connection that calls are using (a maximum connection age):
///   the balancer opens the successor they need while they finish;
/// - a connection with calls on it broke (no GOAWAY, no close the client chose): the
///   transport reconnects, and the names may have changed.
///
/// An idle connection's GOAWAY asks for nothing: the connection closes, the channel goes idle
/// and connects again for its next call. Were the server gone for good (a graceful stop during
/// a rolling deploy), that call would find the old address: so a GOAWAY skipped leaves the
/// names stale, and the first connection attempt that fails after it resolves them again.
///
/// A DNS name is also resolved again every ``GRPCCallOptions/nameResolutionInterval``; under
/// pick-first such a result reaches the transport only when its addresses changed. Every result
/// is laid out for the channel's balancer (``EndpointLayout``). The round-robin balancer drops an
/// address whose connection went away until a result names it again, and leaves one whose
/// connection closed with no call on it idle for good; so under round-robin every connection's
/// end asks for a result (one that leaves an established connection's server out, then one that
/// names it again: a new subchannel connects at once), and any target is resolved again every
/// interval.
///
/// Drop the on-demand part when the transport's balancer stays idle after a GOAWAY.
final class ReconnectOnDemand: Sendable {
  private let state = LockedValue(State())
  /// How results reach the balancer.
  let layout: EndpointLayout

  init(layout: EndpointLayout = .oneEndpoint) {
    self.layout = layout
  }

  private struct State {
    /// The resolver's iterator, waiting for a request.
    var waiter: CheckedContinuation<Wake, any Error>?
    /// Counts the iterator's waits, so that a period that elapses after its wait ended wakes
    /// nothing.
    var waits = 0
    /// Whether a request came that no iterator has taken yet.
    var pending = false
    /// Whether a GOAWAY was let pass without resolving again.
    var stale = false
    /// Servers whose established connection ended, for the round-robin balancer to reconnect.
    var ended: Set<ServerAddress> = []
    var cancelled = false
  }

  /// A connection's GOAWAY came (`first`: its first one), with calls on it or not.
  func connectionWentAway(first: Bool, hadStreams: Bool) {
    guard first else { return }
    if hadStreams {
      // Calls still on a connection that is going away (a maximum age) want its successor.
      self.request()
    } else {
      self.state.withLock { $0.stale = true }
    }
  }

  /// A connection closed, on its event loop, with what its handlers learnt. One that broke
  /// under calls (``ConnectionRecord/brokeUnderCalls``) is reconnected by the transport, and the
  /// names may have changed; an attempt that failed before the server's SETTINGS resolves them
  /// again if a GOAWAY was let pass.
  func connectionEnded(_ record: ConnectionRecord) {
    if self.layout == .endpointPerAddress {
      // A server that went away unannounced: the balancer's subchannel for it may go idle for
      // good. After a GOAWAY the balancer drops the endpoint itself and takes it back from the
      // next result; a close the balancer chose must not make it replace the subchannel again.
      if record.wentAwayUnannounced, let address = record.server {
        self.state.withLock { _ = $0.ended.insert(address) }
      }
      self.request()
    } else if record.brokeUnderCalls {
      self.request()
    } else if !record.established {
      let stale = self.state.withLock { state in
        defer { state.stale = false }
        return state.stale
      }
      if stale { self.request() }
    }
  }

  /// Why the resolver's iterator woke.
  enum Wake: Sendable, Equatable {
    /// The transport needs a result.
    case requested
    /// The resolution interval elapsed.
    case periodic
  }

  /// Asks the resolver for a new result.
  private func request() {
    let waiter = self.state.withLock { state -> CheckedContinuation<Wake, any Error>? in
      state.stale = false
      guard let waiter = state.waiter else {
        state.pending = true
        return nil
      }
      state.waiter = nil
      return waiter
    }
    waiter?.resume(returning: .requested)
  }

  /// The resolution interval of wait `wait` elapsed.
  private func periodElapsed(wait: Int) {
    let waiter = self.state.withLock { state -> CheckedContinuation<Wake, any Error>? in
      guard state.waits == wait, let waiter = state.waiter else { return nil }
      state.waiter = nil
      return waiter
    }
    waiter?.resume(returning: .periodic)
  }

  /// The servers whose established connection ended since the last call.
  fileprivate func takeEnded() -> Set<ServerAddress> {
    self.state.withLock { state in
      defer { state.ended = [] }
      return state.ended
    }
  }

  /// An iterator answered without waiting (the first result, or the first after a failed
  /// resolution): a request made meanwhile is answered by it.
  fileprivate func answeredAtOnce() {
    self.state.withLock {
      $0.pending = false
      $0.stale = false
    }
  }

  /// Waits for a request, or for `interval` seconds when given; throws `CancellationError` when
  /// the channel stops resolving.
  fileprivate func nextRequest(orAfter interval: TimeInterval?) async throws -> Wake {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Wake, any Error>) in
        enum Now {
          case wait(Int)
          case go, stop
        }
        let now = self.state.withLock { state -> Now in
          if state.cancelled { return .stop }
          if state.pending {
            state.pending = false
            return .go
          }
          state.waiter = continuation
          state.waits += 1
          return .wait(state.waits)
        }
        switch now {
        case .wait(let wait):
          if let interval {
            DispatchQueue.global().asyncAfter(deadline: .now() + interval) { [weak self] in
              self?.periodElapsed(wait: wait)
            }
          }
        case .go: continuation.resume(returning: .requested)
        case .stop: continuation.resume(throwing: CancellationError())
        }
      }
    } onCancel: {
      let waiter = self.state.withLock { state -> CheckedContinuation<Wake, any Error>? in
        state.cancelled = true
        defer { state.waiter = nil }
        return state.waiter
      }
      waiter?.resume(throwing: CancellationError())
    }
  }

  /// The transport's target: `inner`, resolved again on request and every `interval` seconds
  /// (`nil`: only on request), its results laid out as `demand.layout` says.
  struct Target: ResolvableTarget {
    var inner: any ResolvableTarget
    var demand: ReconnectOnDemand
    var interval: TimeInterval? = nil
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
      let results = Results(
        inner: inner.names,
        demand: target.demand,
        interval: target.interval,
        // A resolver that pushes its results already gives new ones when they change.
        onDemand: inner.updateMode == .pull
      )
      return NameResolver(
        names: RPCAsyncSequence(wrapping: results),
        updateMode: .push,
        authority: inner.authority
      )
    }
  }

  /// The inner resolver's results, laid out for the balancer: the first at once, then as
  /// requested and, for a periodic resolution, only when changed.
  private struct Results: AsyncSequence, Sendable {
    typealias Element = NameResolutionResult
    let inner: RPCAsyncSequence<NameResolutionResult, any Error>
    let demand: ReconnectOnDemand
    let interval: TimeInterval?
    /// Whether the inner resolver answers when asked (pull) rather than when its names change
    /// (push, passed on as they come).
    let onDemand: Bool

    struct AsyncIterator: AsyncIteratorProtocol {
      var inner: RPCAsyncSequence<NameResolutionResult, any Error>.AsyncIterator
      let results: Results
      /// Whether this iterator answered yet; a new one (the first, or one after a failed
      /// resolution) answers at once.
      var answered = false
      /// What it answered last.
      var last: NameResolutionResult?
      /// A whole result to answer next, at once: it gives the balancer back the endpoints the
      /// previous answer left out.
      var restore: NameResolutionResult?

      /// The addresses of `result`, in any order.
      static func addresses(of result: NameResolutionResult) -> Set<SocketAddress> {
        Set(result.endpoints.flatMap(\.addresses))
      }

      mutating func next() async throws -> NameResolutionResult? {
        if let restore = self.restore {
          self.restore = nil
          self.last = restore
          return restore
        }
        while true {
          var wake = Wake.requested
          if self.results.onDemand, self.answered {
            wake = try await self.results.demand.nextRequest(orAfter: self.results.interval)
          } else if self.results.onDemand {
            self.results.demand.answeredAtOnce()
          }
          self.answered = true
          guard let result = try await self.inner.next() else { return nil }
          let arranged = self.results.demand.layout.arrange(result)
          // The pick-first balancer connects again for any new result: an unchanged one (DNS
          // servers often rotate the order) is not passed on. The round-robin balancer takes back
          // from it the addresses it dropped.
          if wake == .periodic, self.results.demand.layout == .oneEndpoint,
            Self.addresses(of: arranged) == self.last.map(Self.addresses)
          {
            continue
          }
          // The round-robin balancer leaves an endpoint whose connection closed with no call on
          // it idle for good: it reconnects it only when every endpoint is idle (and then all of
          // them, so nothing is left out when every server went away). An endpoint left out of
          // one result and named again in the next gets a new subchannel, which connects at
          // once and, while the server is down, keeps trying with backoff.
          if let reduced = EndpointLayout.removing(self.results.demand.takeEnded(), from: arranged)
          {
            self.restore = arranged
            return reduced
          }
          self.last = arranged
          return arranged
        }
      }
    }

    func makeAsyncIterator() -> AsyncIterator {
      AsyncIterator(inner: self.inner.makeAsyncIterator(), results: self)
    }
  }
}
