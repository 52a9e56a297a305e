internal import Dispatch
public import GRPCCalls
public import GRPCCore

/// One call's token; made by ``GRPCTokenRefreshInterceptorFactory``.
///
/// The call waits for its token before it starts below. Meanwhile the writes, the half-close
/// and the flow-control demand are held and then passed on in order. The token arrives on
/// this interceptor's own queue, so it is ordered with the call's events.
public final class GRPCTokenRefreshInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: the mutable state below is touched only on `dispatchQueue`: by the events,
  // which the manager runs there one at a time, and by the token's arrival, sent there too.
  private let config: GRPCTokenRefreshInterceptorFactory.Config
  private let cache: AccessTokenCache

  private enum Phase {
    /// Before start, or waiting for a token.
    case waiting
    /// Started below with this token.
    case running(GRPCAccessToken)
    case closed
  }

  private var phase = Phase.waiting
  private var started: (request: GRPCRequestOptions, call: GRPCCallOptions)?
  /// Writes not passed on yet; for a retryable call, every write (to replay them).
  private var writes: [any Sendable] = []
  private var finished = false
  private var demand = 0
  private var retried = false
  /// The token's fetch (after the server's retry delay, in a retry), cancelled with the call.
  private var fetch: Task<Void, Never>?
  private var startedAt = ContinuousClock.now
  /// Whether anything of the response went up: a retry would then show the application two
  /// answers.
  private var answered = false

  init(
    manager: GRPCInterceptorManager,
    config: GRPCTokenRefreshInterceptorFactory.Config,
    cache: AccessTokenCache
  ) {
    self.config = config
    self.cache = cache
    super.init(manager: manager)
  }

  private var retryable: Bool {
    guard self.config.retriesUnauthenticated, let safety = self.started?.request.safety else {
      return false
    }
    return safety == .idempotent || safety == .cacheable
  }

  public override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    self.started = (requestOptions, callOptions)
    self.startedAt = .now
    self.fetchToken()
  }

  public override func writeData(_ data: any Sendable) {
    guard case .running = self.phase else {
      self.writes.append(data)
      return
    }
    if self.retryable {
      self.writes.append(data)
    }
    super.writeData(data)
  }

  public override func finish() {
    self.finished = true
    if case .running = self.phase {
      super.finish()
    }
  }

  public override func receiveNextMessages(_ count: Int) {
    self.demand += count
    if case .running = self.phase {
      super.receiveNextMessages(count)
    }
  }

  public override func cancel() {
    self.phase = .closed
    self.fetch?.cancel()
    super.cancel()
  }

  public override func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.answered = true
    super.didReceiveInitialMetadata(initialMetadata)
  }

  public override func didReceiveData(_ data: any Sendable) {
    self.answered = true
    super.didReceiveData(data)
  }

  public override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    if let error, error.code == .unauthenticated, case .running(let token) = self.phase {
      self.cache.invalidate(token)
      // A server that says when to come back (RetryInfo, pushback) is not asked sooner; a
      // delay that outlasts the call's deadline leaves the call to fail as the server said.
      let delay = error.serverRetryDelay
      if self.retryable, !self.retried, !self.answered, !error.serverAskedNotToRetry,
        self.waitFits(delay)
      {
        self.retried = true
        self.phase = .waiting
        self.manager.resetNextInterceptor()
        self.fetchToken(after: delay)
        return
      }
    }
    self.phase = .closed
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }

  /// Whether a retry after `delay` would start before the call's deadline (no deadline: yes).
  private func waitFits(_ delay: Duration?) -> Bool {
    guard let deadline = self.deadline else { return true }
    return ContinuousClock.now + (delay ?? .zero) < deadline
  }

  /// The call's deadline, counted from its start here: the wait for a token is part of it.
  private var deadline: ContinuousClock.Instant? {
    guard let timeout = self.started?.call.timeout, timeout > 0 else { return nil }
    return self.startedAt + .seconds(timeout)
  }

  // MARK: The token

  private func fetchToken(after delay: Duration? = nil) {
    let cache = self.cache
    self.fetch = Task {
      let result: Result<GRPCAccessToken, any Error>
      do {
        if let delay {
          try await Task.sleep(for: delay)
        }
        result = .success(try await cache.token())
      } catch {
        result = .failure(error)
      }
      self.dispatchQueue.async { self.tokenArrived(result) }
    }
  }

  private func tokenArrived(_ result: Result<GRPCAccessToken, any Error>) {
    guard case .waiting = self.phase, let started = self.started else { return }
    switch result {
    case .success(let token):
      var options = started.call
      if let deadline = self.deadline {
        // The call below gets what is left of the deadline, not a fresh one.
        let left = deadline - .now
        guard left > .zero else {
          self.fail(
            GRPCError(
              code: .deadlineExceeded,
              message: "The deadline passed while the call waited for its access token"
            )
          )
          return
        }
        options.timeout = left / .seconds(1)
      }
      self.phase = .running(token)
      let value = self.config.scheme.isEmpty ? token.value : "\(self.config.scheme) \(token.value)"
      options.initialMetadata.replaceOrAddString(value, forKey: self.config.metadataKey)
      self.manager.startNextInterceptor(requestOptions: started.request, callOptions: options)
      self.passHeldEvents()
    case .failure(let error):
      let message = (error as? GRPCError)?.message ?? "\(error)"
      self.fail(
        GRPCError(
          code: .unauthenticated,
          message: "Could not get an access token: \(message)",
          cause: error
        )
      )
    }
  }

  /// Closes the call with `error` without starting it below.
  private func fail(_ error: GRPCError) {
    self.phase = .closed
    self.manager.forwardPreviousInterceptorClose(trailingMetadata: nil, error: error)
    self.manager.shutDown()
  }

  /// Passes on what the call did while it waited: every write (again, in a retry), the
  /// half-close and the demand.
  private func passHeldEvents() {
    let writes = self.writes
    if !self.retryable {
      self.writes = []
    }
    for write in writes {
      self.manager.writeNextInterceptor(write)
    }
    if self.finished {
      self.manager.finishNextInterceptor()
    }
    if self.demand > 0 {
      self.manager.receiveNextInterceptorMessages(self.demand)
    }
  }
}
