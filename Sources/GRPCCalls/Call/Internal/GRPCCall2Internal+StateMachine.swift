extension GRPCCall2Internal {
  /// The RPC runner's whole state, free of I/O: requests waiting for the transport, response
  /// demand (flow control), the RPC's task and its lease, the current attempt (whether its
  /// stream opened, whether responses went up), why the RPC was cancelled, and whether the close
  /// went up.
  ///
  /// ```
  ///  ┌──────┐  start   ┌─────────┐  close / cancel  ┌───────┐
  ///  │ idle │ ───────▶ │ running │ ───────────────▶ │ ended │
  ///  └──────┘          └─────────┘                  └───────┘
  ///     │ cancel: closes at once (CANCELLED)            ▲
  ///     └───────────────────────────────────────────────┘
  /// ```
  ///
  /// Requests that arrive before the RPC's writer asks for them wait here in order; a writer
  /// that finds none waits (its continuation is kept) until a write, the finish, a cancel or
  /// the end of the RPC wakes it. Likewise a flow-controlled reader waits for demand. The close
  /// passes once; `ended` absorbs every event.
  ///
  /// The requests an attempt took are kept (up to ``replayLimit`` bytes, as gRPC core's
  /// per-RPC retry buffer) so that an attempt the server never saw can be replaced by one that
  /// sends them again (gRFC A6 transparent retry, ``rewind()``), unless a response went up.
  struct StateMachine: Sendable {
    enum Phase: Sendable, Equatable {
      case idle
      case running
      case ended
    }

    /// Why the RPC's task was cancelled from this side.
    enum CancelReason: Sendable, Equatable {
      case app
      case deadline
    }

    /// What the writer gets when it asks for the next request.
    enum NextRequest: Sendable {
      case message(any Sendable)
      /// No more requests: the application finished, so half-close.
      case end
      /// The call was cancelled, or the RPC ended before the application finished: reset the
      /// stream, never half-close it, so the server sees a cancellation rather than a complete
      /// request stream (queued requests are dropped).
      case reset
      /// Nothing yet: the writer parks (``parkWriter(_:)``) and asks again when woken.
      case wait
    }

    /// What the owner does after a cancel.
    struct CancelActions: Sendable {
      /// The RPC's task to cancel: the RPC then ends with a cancellation and closes from it.
      var task: Task<Void, Never>?
      var writer: CheckedContinuation<Void, Never>?
      var reader: CheckedContinuation<Bool, Never>?
      /// The RPC never started: close now.
      var closeNow = false
    }

    private(set) var phase: Phase = .idle
    private(set) var cancelReason: CancelReason?
    private var requests: [any Sendable] = []
    private var nextRequestIndex = 0
    private(set) var requestsFinished = false
    /// No more requests will be sent: the RPC was cancelled or is over.
    private var requestsEnded = false
    /// Whether no request will be added: the application finished, or the RPC took every
    /// request, was cancelled or is over.
    var requestSideEnded: Bool { self.requestsFinished || self.requestsEnded }
    private var writer: CheckedContinuation<Void, Never>?
    private(set) var flowControl = false
    private(set) var demand = 0
    private var reader: CheckedContinuation<Bool, Never>?
    private var closed = false
    /// The requests the current attempt took, while they fit in ``replayLimit``.
    private var replay = ReplayLog()
    /// Writes that a replay sends again, already reported to the application.
    private var repeatedWrites = 0
    /// The RPC's task, from start to close.
    private var task: Task<Void, Never>?
    /// The call's hold on its channel, from the RPC's start to the close: a call counts as in
    /// flight on its connection until it closes, not until its stream is torn down, so the next
    /// call made from the close finds it free.
    private var lease: ChannelLease?
    /// Whether the current attempt's stream opened (for transparent retry).
    private(set) var streamOpened = false
    /// Whether response headers or messages went up the chain: then no attempt is retried.
    private(set) var delivered = false
    /// Whether the writes of the requests known at the start were reported, once per call
    /// whatever the attempts.
    private var knownWritesReported = false
    /// Request messages the transport accepted, for telling a stream that answers its requests
    /// from one that floods the client.
    private var requestsSent = 0

    /// The most request bytes kept for a transparent retry (gRPC core's
    /// `grpc.per_rpc_retry_buffer_size` default); a call that sent more is not retried.
    static let replayLimit = 256 * 1024

    /// The requests an attempt took, in order.
    private struct ReplayLog: Sendable {
      var messages: [any Sendable] = []
      var bytes = 0
      /// How many of them the transport accepted.
      var accepted = 0
      /// Whether the attempt took more than ``replayLimit`` bytes: it cannot be replayed.
      var overflowed = false
    }

    // MARK: Events from above

    /// The call starts; `writes` and `finish` came with it.
    ///
    /// - Returns: Whether the owner starts the RPC.
    mutating func start(writes: [any Sendable], finish: Bool, flowControl: Bool) -> Bool {
      guard self.phase == .idle else { return false }
      self.phase = .running
      self.requests.append(contentsOf: writes)
      self.requestsFinished = finish
      self.flowControl = flowControl
      return true
    }

    /// The RPC runs in `task`, which the close lets go of and a cancel cancels.
    mutating func running(in task: Task<Void, Never>) {
      guard self.phase == .running else { return }
      self.task = task
    }

    /// The RPC's task while it runs, to cancel without a reason of this side's.
    var runningTask: Task<Void, Never>? { self.task }

    /// A request message; returns a waiting writer to wake.
    ///
    /// Kept between two attempts too (the RPC that ended may be replaced, ``rewind()``); the
    /// close drops what is left.
    mutating func write(_ message: any Sendable) -> CheckedContinuation<Void, Never>? {
      guard !self.requestsFinished, self.cancelReason == nil, self.phase != .ended else {
        return nil
      }
      self.requests.append(message)
      return self.takeWriter()
    }

    /// The request side half-closes; returns a waiting writer to wake.
    mutating func finish() -> CheckedContinuation<Void, Never>? {
      guard !self.requestsFinished else { return nil }
      self.requestsFinished = true
      return self.takeWriter()
    }

    /// Demand for `count` more messages; returns a waiting reader to give a unit to.
    mutating func addDemand(_ count: Int) -> CheckedContinuation<Bool, Never>? {
      guard count > 0, self.phase != .ended else { return nil }
      self.demand = self.demand.addingReportingOverflow(count).overflow ? .max : self.demand + count
      guard let reader = self.reader else { return nil }
      self.reader = nil
      self.demand -= 1
      return reader
    }

    /// The call is cancelled, by the app or by its deadline (the first reason wins).
    mutating func cancel(_ reason: CancelReason) -> CancelActions {
      switch self.phase {
      case .idle:
        self.phase = .ended
        self.cancelReason = reason
        self.closed = true
        return CancelActions(closeNow: true)
      case .running:
        guard self.cancelReason == nil else { return CancelActions() }
        self.cancelReason = reason
        self.requestsEnded = true
        let reader = self.reader
        self.reader = nil
        return CancelActions(task: self.task, writer: self.takeWriter(), reader: reader)
      case .ended:
        return CancelActions()
      }
    }

    // MARK: Events from the RPC

    /// The RPC holds `lease` until the close (``close()``), which the RPC's end always makes.
    mutating func holdLease(_ lease: ChannelLease) {
      self.lease = lease
    }

    /// An attempt begins: its stream has not opened yet.
    mutating func attemptBegins() {
      self.streamOpened = false
    }

    /// The attempt's stream opened: requests may leave from now on.
    mutating func streamDidOpen() {
      self.streamOpened = true
    }

    /// Response headers or a message go up the chain.
    mutating func deliversResponse() {
      self.delivered = true
    }

    /// Whether the writes of the requests known at the start are to be reported: the first
    /// time an attempt sent them (a transparent retry sends them again).
    mutating func reportsKnownWrites() -> Bool {
      defer { self.knownWritesReported = true }
      return !self.knownWritesReported
    }

    /// The transport accepted `count` requests; returns whether they are reported up the chain
    /// (flow control).
    mutating func sent(_ count: Int) -> Bool {
      self.requestsSent += count
      return self.flowControl
    }

    /// Whether a stream that has delivered `responses` messages floods the client rather than
    /// answers its requests: no more requests will come (the application finished, every
    /// request was known at the start, or the RPC was cancelled), or the responses outnumber
    /// the requests sent by more than two to one (a subscription on a request side left open).
    func floodsClient(responses: Int) -> Bool {
      self.requestSideEnded || responses > 2 * self.requestsSent + 2
    }

    /// Every request, when the request side already half-closed: they can leave with the
    /// end of the stream in one write. `nil` while more may come.
    mutating func takeAllRequestsIfFinished() -> [any Sendable]? {
      guard self.requestsFinished, !self.requestsEnded else { return nil }
      let all = Array(self.requests[self.nextRequestIndex...])
      self.requests = []
      self.nextRequestIndex = 0
      self.requestsEnded = true
      return all
    }

    /// The writer asks for the next request.
    mutating func nextRequest() -> NextRequest {
      if self.cancelReason != nil { return .reset }
      if self.nextRequestIndex < self.requests.count {
        let message = self.requests[self.nextRequestIndex]
        self.nextRequestIndex += 1
        if !self.replay.overflowed {
          self.replay.messages.append(message)
        }
        if self.nextRequestIndex == self.requests.count {
          self.requests.removeAll(keepingCapacity: true)
          self.nextRequestIndex = 0
        }
        return .message(message)
      }
      return self.requestSideEnd
    }

    /// The attempt serialized a request it took into `count` bytes.
    mutating func tookRequestBytes(_ count: Int) {
      guard !self.replay.overflowed else { return }
      self.replay.bytes += count
      if self.replay.bytes > Self.replayLimit {
        self.replay = ReplayLog(overflowed: true)
      }
    }

    /// The transport accepted one of the attempt's requests; returns whether that is news to
    /// the application (a replay sends again requests it was told of).
    mutating func acceptedWrite() -> Bool {
      self.replay.accepted += 1
      guard self.repeatedWrites > 0 else { return true }
      self.repeatedWrites -= 1
      return false
    }

    /// Puts the requests the attempt took back in front of the queue, for a new attempt that
    /// replaces one the server never saw; `false` when it cannot: the call was cancelled, or
    /// the requests did not fit in ``replayLimit``.
    mutating func rewind() -> Bool {
      guard self.cancelReason == nil, self.phase == .running, !self.replay.overflowed else {
        return false
      }
      self.requests = self.replay.messages + self.requests[self.nextRequestIndex...]
      self.nextRequestIndex = 0
      // The application was told of the writes this attempt reported, and of those an earlier
      // one reported beyond them.
      self.repeatedWrites += self.replay.accepted
      self.replay = ReplayLog()
      self.requestsEnded = false
      return true
    }

    /// Keeps the writer's continuation until a request, the finish or the end comes; `false`
    /// (not kept) when one already did, so the writer looks again at once.
    mutating func parkWriter(_ writer: CheckedContinuation<Void, Never>) -> Bool {
      guard case .wait = self.peekRequest() else { return false }
      self.writer = writer
      return true
    }

    private func peekRequest() -> NextRequest {
      if self.cancelReason != nil { return .reset }
      if self.nextRequestIndex < self.requests.count {
        return .message(self.requests[self.nextRequestIndex])
      }
      return self.requestSideEnd
    }

    /// What the writer does once every queued request left.
    private var requestSideEnd: NextRequest {
      if self.requestsFinished { return .end }
      return self.requestsEnded ? .reset : .wait
    }

    /// The reader asks for a unit of demand: `true` to go on, `false` to stop (cancelled);
    /// `nil` means `reader` was kept until demand comes.
    mutating func takeDemand(reader: CheckedContinuation<Bool, Never>?) -> Bool? {
      if self.cancelReason != nil || self.phase == .ended { return false }
      if self.demand > 0 {
        self.demand -= 1
        return true
      }
      if let reader {
        self.reader = reader
      }
      return nil
    }

    /// The RPC is over (or its task was cancelled): wake whoever waits, so the RPC can end.
    mutating func endRequests() -> (
      CheckedContinuation<Void, Never>?, CheckedContinuation<Bool, Never>?
    ) {
      self.requestsEnded = true
      let reader = self.reader
      self.reader = nil
      return (self.takeWriter(), reader)
    }

    /// The close, once; lets go of the RPC's task, and returns whether the close goes up and
    /// the lease to release.
    mutating func close() -> (first: Bool, lease: ChannelLease?) {
      self.task = nil
      let lease = self.lease
      self.lease = nil
      guard !self.closed else { return (false, lease) }
      self.closed = true
      self.phase = .ended
      self.requestsEnded = true
      return (true, lease)
    }

    private mutating func takeWriter() -> CheckedContinuation<Void, Never>? {
      defer { self.writer = nil }
      return self.writer
    }
  }
}
