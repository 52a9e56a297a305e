internal import Foundation
internal import GRPCCalls

/// One token for every call that shares a ``GRPCTokenRefreshInterceptorFactory``: fetched at
/// most once at a time (the calls that need it meanwhile wait for the same fetch), and kept
/// until shortly before it expires or the server rejects it.
///
/// ```
///   empty ──token()──▶ fetching ──fetched──▶ ready ──expiring / invalidate──▶ empty
///     ▲                   │ failed
///     └───────────────────┘
/// ```
final class AccessTokenCache: Sendable {
  typealias Source = @Sendable () async throws -> GRPCAccessToken

  private enum State {
    case empty
    case fetching(Task<GRPCAccessToken, any Error>)
    case ready(GRPCAccessToken)
  }

  private enum Lookup {
    case cached(GRPCAccessToken)
    case wait(Task<GRPCAccessToken, any Error>)
  }

  private let state = LockedValue(State.empty)
  private let source: Source
  private let refreshMargin: TimeInterval
  private let now: @Sendable () -> Date

  init(source: @escaping Source, refreshMargin: TimeInterval, now: @escaping @Sendable () -> Date) {
    self.source = source
    self.refreshMargin = refreshMargin
    self.now = now
  }

  /// A token that is not about to expire: the cached one, or one fetched now (or by the fetch
  /// already under way).
  func token() async throws -> GRPCAccessToken {
    let now = self.now()
    let cached = self.state.withLock { state -> Lookup in
      switch state {
      case .ready(let token) where self.isFresh(token, at: now):
        return .cached(token)
      case .fetching(let task):
        return .wait(task)
      case .empty, .ready:
        // The source runs in a task of its own: a call that is cancelled while waiting does
        // not cancel the fetch the other calls wait for.
        let task = Task { [source] in try await source() }
        state = .fetching(task)
        return .wait(task)
      }
    }
    let task: Task<GRPCAccessToken, any Error>
    switch cached {
    case .cached(let token): return token
    case .wait(let fetch): task = fetch
    }
    do {
      let token = try await task.value
      self.state.withLock { state in
        if case .fetching(let current) = state, current == task {
          state = .ready(token)
        }
      }
      return token
    } catch {
      self.state.withLock { state in
        if case .fetching(let current) = state, current == task {
          state = .empty
        }
      }
      throw error
    }
  }

  /// Forgets `token` (the server rejected it), unless a newer one replaced it already.
  func invalidate(_ token: GRPCAccessToken) {
    self.state.withLock { state in
      if case .ready(let current) = state, current == token {
        state = .empty
      }
    }
  }

  private func isFresh(_ token: GRPCAccessToken, at now: Date) -> Bool {
    guard let expiry = token.expiresAt else { return true }
    return now.addingTimeInterval(self.refreshMargin) < expiry
  }
}
