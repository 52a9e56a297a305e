internal import Dispatch

extension GRPCInterceptorManager {
  /// One interceptor's place in a call's chain, free of I/O: which events may pass, its
  /// neighbours, and when and where the interceptor's events run.
  ///
  /// Requests (towards the transport):
  /// ```
  ///  ┌─────────────┐  start  ┌─────────┐  finish  ┌─────────────┐
  ///  │ initialized │ ──────▶ │ started │ ───────▶ │ half-closed │
  ///  └─────────────┘         └─────────┘          └─────────────┘
  ///        │ cancel              │ cancel               │ cancel
  ///        └─────────────────────┴──────────────────────┴───────▶ ┌───────────┐
  ///                                                                │ cancelled │
  ///                                                                └───────────┘
  /// ```
  /// `write` passes only in `started`; `receiveNextMessages` in every state but `cancelled`.
  ///
  /// Responses (towards the application): initial metadata at most once and before any message;
  /// messages and write acknowledgements until the close; the close once. After the close, or
  /// after ``shutDown()``, nothing passes in either direction but a cancel that was not yet sent.
  ///
  /// A retry (``resetNext()``) takes the request side back to `initialized` and makes the
  /// elements below anew for the next attempt.
  ///
  /// Whatever does not pass is dropped: misuse by an interceptor is a defined no-op.
  ///
  /// The interceptor's events run one burst at a time, by one thread at a time:
  /// ```
  ///            run: .now (inline) or .schedule (queued)
  ///  ┌──────┐ ─────────────────────────────────────────▶ ┌─────────┐ ◀─┐ nextBurst: .run (events
  ///  │ idle │                                              │ running │   │ that came meanwhile) or
  ///  └──────┘ ◀───────────────────────────────────────── └─────────┘ ──┘ .deliver (what they
  ///               nextBurst: .done (nothing pending,                        passed on)
  ///               nothing passed on)
  /// ```
  /// An event that comes while a thread runs the interceptor waits in `pending` for that
  /// thread, which is what keeps events in order on a concurrent queue, and what makes an
  /// interceptor's own requests (passed on from inside its events) run after the event that
  /// made them, with no need to know which thread is asking. Before ``attach(_:)`` events wait
  /// too; the attach schedules them on the interceptor's queue.
  struct StateMachine: Sendable {
    typealias Work = @Sendable () -> Void

    enum RequestPhase: Sendable, Equatable {
      case initialized
      case started
      case halfClosed
      case cancelled
    }

    enum Request: Sendable {
      case start
      case write
      case finish
      case cancel
      case receiveNextMessages
    }

    enum Response: Sendable {
      case initialMetadata
      case message
      case didWrite
      case close
    }

    /// How the interceptor's events run.
    enum Mode: Sendable {
      /// No interceptor yet: events wait for the attach.
      case unattached
      /// On the thread that delivers them.
      case inline
      /// In blocks on the interceptor's queue. `targetsAbove`: that queue targets the queue the
      /// element above delivers on, so the responses a block passes up are delivered in it.
      case queued(DispatchQueue, targetsAbove: Bool)
    }

    /// What the manager does with an event: run it on this thread now (then whatever comes
    /// meanwhile), schedule a block on the interceptor's queue, or nothing (a thread that runs
    /// the interceptor, or the attach, takes it).
    enum RunAction {
      case now
      case schedule(DispatchQueue)
      case later
    }

    /// What the thread running the interceptor does next.
    enum Burst {
      /// Run these events, in order.
      case run([Work])
      /// Deliver what the events that ran passed on.
      case deliver(PassedOn)
      /// Nothing is left: the thread lets go.
      case done
    }

    /// What a burst of events passed on, delivered when the burst is over.
    struct PassedOn: Sendable {
      /// Requests to the elements below (see `RequestBatch`).
      var requests = RequestBatch()
      /// Responses passed up while a block ran on a queue that runs within the queue of the
      /// element above: delivered in that block, which saves the element above a block of its
      /// own (see ``GRPCInterceptorManager/defaultQueueTarget``).
      var responses: [(link: any ResponseLink, response: CallResponse)] = []

      var isEmpty: Bool { self.requests.isEmpty && self.responses.isEmpty }

      /// Delivers the requests, then the responses; from a block that runs within the queue
      /// of the element above when there are responses.
      func deliver() {
        self.requests.deliver()
        for (link, response) in self.responses {
          link.receive(response, withinDeliveryQueue: true)
        }
      }
    }

    /// What the manager does with a request the interceptor passes on.
    enum RequestStep {
      case dropped
      /// Held for the next element until the burst is over.
      case held
      /// The first request of this attempt: make the elements below from the chain, then
      /// ``madeNext(_:attempt:for:)``.
      case makeNext(InterceptorChain, attempt: Int)
    }

    /// What the manager does with a response the interceptor passes up.
    enum ResponseStep {
      case dropped
      /// Held for the end of the running block (see `PassedOn.responses`).
      case held
      /// Deliver it to the element above now.
      case deliver(any ResponseLink)
    }

    /// What the manager let go of; released outside its lock, since deinitializers may run.
    struct Released: Sendable {
      var interceptor: GRPCInterceptor?
      var previous: (any ResponseLink)?
      var next: (any RequestLink)?
      var rest: InterceptorChain?
      /// The elements below if they have not closed: nothing would ever read what they answer,
      /// so they are cancelled (a cancel the interceptor passed on from outside its events may
      /// still be waiting for its burst, which the shutdown leaves with nothing to reach).
      var orphan: (any RequestLink)?

      func cancelOrphan() {
        self.orphan?.cancel()
      }
    }

    // What may pass.
    private(set) var requestPhase: RequestPhase = .initialized
    private(set) var sentInitialMetadata = false
    private(set) var sentMessage = false
    private(set) var closed = false
    private(set) var isShutDown = false

    // The neighbours.
    private(set) var interceptor: GRPCInterceptor?
    private(set) var previous: (any ResponseLink)?
    /// The elements below, made from `rest` on the first request this attempt passes on.
    private var next: (any RequestLink)?
    private var nextMade = false
    /// Whether the elements below closed towards this interceptor (this attempt).
    private var nextClosed = false
    /// The chain below, not made yet; kept so that a retry can make it anew.
    private var rest: InterceptorChain?
    /// Counts retries: responses from an earlier attempt's elements are dropped.
    private(set) var attempt = 0

    // Running the interceptor's events.
    /// Kept after the shutdown lets go of the interceptor, so that events arriving late still
    /// run (into nothing) instead of waiting in `pending`, which would keep the manager alive.
    private(set) var mode: Mode = .unattached
    /// Whether a thread runs the interceptor's events now, or a block that will is scheduled.
    private(set) var running = false
    private var pending: [Work] = []
    private var passedOn = PassedOn()

    init(previous: (any ResponseLink)? = nil, rest: InterceptorChain? = nil) {
      self.previous = previous
      self.rest = rest
    }

    var pendingCount: Int { self.pending.count }

    // MARK: The interceptor

    /// The factory made `interceptor`. Returns the queue to schedule a block on for the events
    /// that came before, if any did.
    mutating func attach(_ interceptor: GRPCInterceptor) -> DispatchQueue? {
      self.interceptor = interceptor
      self.mode =
        interceptor.executesInline
        ? .inline
        : .queued(interceptor.dispatchQueue, targetsAbove: interceptor.targetsElementAbove)
      guard !self.pending.isEmpty, !self.running else { return nil }
      self.running = true
      return interceptor.dispatchQueue
    }

    /// The factory made no interceptor: hands back everything, events waiting included.
    mutating func discard() -> (Released, [Work]) {
      defer { self.pending = [] }
      return (self.release(), self.pending)
    }

    /// The interceptor to run an event on, unless the manager shut down or `attempt` (for a
    /// response) is no longer the current one.
    func interceptor(forAttempt attempt: Int?) -> GRPCInterceptor? {
      attempt == nil || attempt == self.attempt ? self.interceptor : nil
    }

    // MARK: Running events

    /// An event for the interceptor.
    mutating func run(_ work: @escaping Work) -> RunAction {
      if !self.running, case .inline = self.mode {
        self.running = true
        return .now
      }
      self.pending.append(work)
      guard !self.running, case .queued(let queue, _) = self.mode else { return .later }
      self.running = true
      return .schedule(queue)
    }

    /// What the running thread does next: first what the last burst passed on, then the
    /// events that came meanwhile; when neither is left, it lets go.
    mutating func nextBurst() -> Burst {
      if !self.passedOn.isEmpty {
        defer { self.passedOn = PassedOn() }
        return .deliver(self.passedOn)
      }
      if !self.pending.isEmpty {
        defer { self.pending = [] }
        return .run(self.pending)
      }
      self.running = false
      return .done
    }

    // MARK: Requests

    /// A request the interceptor passes on, from its events (see ``run(_:)``).
    mutating func request(_ request: Request, _ outgoing: RequestBatch.Request) -> RequestStep {
      guard self.pass(request) else { return .dropped }
      if self.nextMade {
        guard let next = self.next else { return .dropped }
        self.passedOn.requests.append(outgoing, to: next)
        return .held
      }
      guard let rest = self.rest else { return .dropped }
      self.nextMade = true
      return .makeNext(rest, attempt: self.attempt)
    }

    /// The elements below `attempt` were made for `outgoing`. False when that attempt is over
    /// (a retry, or the shutdown, came while they were made): the caller cancels them.
    mutating func madeNext(
      _ made: any RequestLink,
      attempt: Int,
      for outgoing: RequestBatch.Request
    ) -> Bool {
      guard !self.isShutDown, attempt == self.attempt else { return false }
      self.next = made
      self.passedOn.requests.append(outgoing, to: made)
      return true
    }

    /// A retry: returns the elements below, to cancel; what this burst passed on to them goes
    /// nowhere. The next start makes them anew.
    mutating func resetNext() -> (any RequestLink)? {
      guard !self.isShutDown else { return nil }
      defer {
        self.next = nil
        self.nextMade = false
        self.nextClosed = false
        self.attempt += 1
        self.restartRequests()
      }
      if let next = self.next {
        self.passedOn.requests.removeAll(for: next)
      }
      return self.next
    }

    /// The elements below `attempt` closed towards this interceptor: they need no cancel.
    mutating func nextDidClose(attempt: Int) {
      if self.attempt == attempt {
        self.nextClosed = true
      }
    }

    // MARK: Responses

    /// A response the interceptor passes up. The close is the last: the manager lets go of its
    /// neighbours and of the interceptor, whether or not the interceptor shuts down itself.
    mutating func respond(_ response: CallResponse) -> (step: ResponseStep, released: Released?) {
      guard let previous = self.previous, self.pass(response.kind) else { return (.dropped, nil) }
      var released: Released?
      if case .close = response {
        released = self.release()
      }
      if self.running, case .queued(_, targetsAbove: true) = self.mode {
        self.passedOn.responses.append((previous, response))
        return (.held, released)
      }
      return (.deliver(previous), released)
    }

    // MARK: What may pass

    /// Whether a request may be passed to the next element; moves the request phase on.
    mutating func pass(_ request: Request) -> Bool {
      if self.isShutDown || self.closed {
        // A call that ended may still tell the elements below it to stop.
        guard case .cancel = request, self.requestPhase != .cancelled else { return false }
        self.requestPhase = .cancelled
        return true
      }
      switch (request, self.requestPhase) {
      case (.start, .initialized):
        self.requestPhase = .started
        return true
      case (.write, .started):
        return true
      case (.finish, .started):
        self.requestPhase = .halfClosed
        return true
      case (.cancel, .initialized), (.cancel, .started), (.cancel, .halfClosed):
        self.requestPhase = .cancelled
        return true
      case (.receiveNextMessages, .initialized), (.receiveNextMessages, .started),
        (.receiveNextMessages, .halfClosed):
        return true
      default:
        return false
      }
    }

    /// Whether a response may be passed to the previous element; records it.
    mutating func pass(_ response: Response) -> Bool {
      guard !self.closed, !self.isShutDown else { return false }
      switch response {
      case .initialMetadata:
        guard !self.sentInitialMetadata, !self.sentMessage else { return false }
        self.sentInitialMetadata = true
      case .message:
        self.sentMessage = true
      case .didWrite:
        break
      case .close:
        self.closed = true
      }
      return true
    }

    /// A retry: the elements below are made anew, so requests start over. Ignored once the
    /// call has closed or shut down.
    mutating func restartRequests() {
      guard !self.closed, !self.isShutDown else { return }
      self.requestPhase = .initialized
    }

    /// The interceptor is done: nothing reaches it, or passes through it, any more. Hands back
    /// what the manager held, to be released after the lock.
    @discardableResult
    mutating func shutDown() -> Released {
      self.release()
    }

    private mutating func release() -> Released {
      self.isShutDown = true
      defer {
        self.interceptor = nil
        self.previous = nil
        self.next = nil
        self.rest = nil
      }
      return Released(
        interceptor: self.interceptor,
        previous: self.previous,
        next: self.next,
        rest: self.rest,
        orphan: self.nextClosed ? nil : self.next
      )
    }
  }
}

extension CallResponse {
  fileprivate var kind: GRPCInterceptorManager.StateMachine.Response {
    switch self {
    case .initialMetadata: .initialMetadata
    case .message: .message
    case .didWrite: .didWrite
    case .close: .close
    }
  }
}
