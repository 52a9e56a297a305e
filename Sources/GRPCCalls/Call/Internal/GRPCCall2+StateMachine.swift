internal import GRPCCore

extension GRPCCall2 {
  /// A call's whole state, both halves, free of I/O.
  ///
  /// Request half (what the application asks of the RPC):
  /// ```
  ///            start                     finish
  ///  ┌──────┐ ───────▶ ┌─────────┐ ─────────────▶ ┌─────────────┐
  ///  │ idle │          │ started │                │ half-closed │
  ///  └──────┘          └─────────┘                └─────────────┘
  ///     │ cancel / close   │ cancel / close              │ cancel / close
  ///     └──────────────────┴─────────────────────────────┴──────▶ ┌───────┐
  ///                                                                │ ended │
  ///                                                                └───────┘
  /// ```
  /// Response half (what the handler is told):
  /// ```
  ///  ┌──────┐  close taken for delivery   ┌────────┐
  ///  │ open │ ──────────────────────────▶ │ closed │
  ///  └──────┘                             └────────┘
  ///     │ cancel: pending dropped, the cancel close queued   ▲
  ///     └──────────────────────────▶ ┌───────────┐ ─────────┘
  ///                                  │ cancelled │ cancel close taken
  ///                                  └───────────┘
  /// ```
  ///
  /// Lifetime (the top of the request path, `head`, and the call's hold on itself):
  /// ```
  ///  ┌─────────┐ attach  ┌──────┐ startRPC ┌─────────────┐ close taken ┌─────────┐
  ///  │ created │ ──────▶ │ head │ ───────▶ │ head + self │ ──────────▶ │ let go  │
  ///  └─────────┘         └──────┘          └─────────────┘             └─────────┘
  ///                         │ close taken (a cancel before start)           ▲
  ///                         └───────────────────────────────────────────────┘
  /// ```
  /// (A thread still performing actions when the close is taken lets go of the head when it is
  /// done.)
  ///
  /// Writes, a finish and demand given before start are buffered and handed over by start, in
  /// order. Misuse (start twice, write after finish or cancel, finish twice) is a no-op.
  ///
  /// Actions for the chain leave in the order the machine decides them, even when several
  /// threads drive the call: ``schedule(_:owner:)`` gives the first thread that finds no one
  /// performing a batch to perform, and queues the action otherwise; the performing thread asks
  /// ``performed()`` for what was queued meanwhile until nothing is.
  ///
  /// Responses from below are appended to a pending list; the owner schedules one drain when
  /// the list goes from empty to non-empty (``receive(_:)`` returns `true`), and the drain takes
  /// them one at a time with ``nextDelivery()`` until none is left. So a burst (a unary call's
  /// headers, message and close) costs one hop, callbacks of one call never overlap, and a
  /// cancel drops whatever is still pending. Taking the close lets go of the chain and of the
  /// call's hold on itself, and makes the machine terminal: every later event is absorbed.
  struct StateMachine: Sendable {
    enum RequestState: Sendable {
      case idle(Idle)
      case started
      case halfClosed
      case ended
    }

    struct Idle: Sendable {
      var bufferedWrites: [any Sendable] = []
      var finishRequested = false
      var demand = 0
    }

    enum ResponseState: Sendable, Equatable {
      /// Responses are delivered; a close from below may already be pending.
      case open
      /// The application cancelled: only the cancel close is left to deliver.
      case cancelled
      /// The close was taken for delivery: nothing follows.
      case closed
    }

    /// A response on its way to the handler.
    typealias Delivery = CallResponse

    /// What the owner does to the chain below.
    enum RequestAction: Sendable {
      case none
      /// Start the RPC, then send `writes`, ask for `demand` messages and, if `finish`,
      /// half-close.
      case startRPC(writes: [any Sendable], finish: Bool, demand: Int)
      case write(any Sendable)
      case finish
      case receiveNextMessages(Int)
      /// Cancel the chain (started or not, so that its interceptors end).
      case cancel
    }

    private(set) var request: RequestState = .idle(Idle())
    private(set) var response: ResponseState = .open
    private var pending: [Delivery] = []
    /// The index of the next pending delivery (the slots before it were taken, and hold
    /// `.didWrite`); the list is emptied when it is all taken.
    private var next = 0
    /// Whether a drain is scheduled or running: one at a time, so callbacks never overlap.
    private(set) var draining = false
    /// Whether a close came from below: nothing from below is accepted after it.
    private var closeReceived = false
    /// The kinds of misuse already reported: each is logged once per call.
    private var reportedMisuse: Set<Misuse> = []
    /// How many drains were scheduled on the handler's queue: its hops (for tests). A drain
    /// that runs where the response came from, within that queue, is not one.
    private(set) var drainsScheduled = 0

    /// The top of the request path: the first interceptor's manager, or the transport. Let go
    /// of when the call closes, which ends the chain's references to the call.
    private(set) var head: (any RequestLink)?
    /// Actions decided and not performed yet, in order.
    private var queued: [RequestAction] = []
    /// Whether a thread is performing actions: only one does, so they leave in order.
    private var performing = false
    /// The close was taken while a thread was performing: that thread still performs what is
    /// queued (a cancel that raced it, whose close was delivered already), then lets go of the
    /// head.
    private var releaseHeadWhenPerformed = false
    /// The call's hold on itself from start to close, so the caller need not keep it.
    private var keepAlive: (any Sendable)?

    /// Actions for one thread to perform on `head`, in order: `first`, then `rest`. Most batches
    /// are one action, which needs no array.
    struct Batch: Sequence {
      var first: RequestAction
      var rest: ArraySlice<RequestAction> = []
      var head: any RequestLink

      func makeIterator() -> Iterator {
        Iterator(first: self.first, rest: self.rest.makeIterator())
      }

      struct Iterator: IteratorProtocol {
        var first: RequestAction?
        var rest: ArraySlice<RequestAction>.Iterator

        mutating func next() -> RequestAction? {
          if let first = self.first {
            self.first = nil
            return first
          }
          return self.rest.next()
        }
      }
    }

    /// What taking the close lets go of, to be released after the handler's last callback.
    struct Released {
      var head: (any RequestLink)?
      var owner: (any Sendable)?
    }

    /// A way of driving the call that does nothing.
    enum Misuse: Sendable, Hashable {
      case startTwice
      case writeAfterFinish
    }

    /// Whether `misuse` is to be reported: the first time it happens on this call.
    mutating func shouldReport(_ misuse: Misuse) -> Bool {
      self.reportedMisuse.insert(misuse).inserted
    }

    var isClosed: Bool { self.response == .closed }

    /// Whether the application half-closed the request side (before or after start).
    var finishWasRequested: Bool {
      switch self.request {
      case .idle(let idle): return idle.finishRequested
      case .halfClosed: return true
      case .started, .ended: return false
      }
    }

    /// Responses waiting for the drain.
    var pendingCount: Int { self.pending.count - self.next }

    // MARK: Requests

    mutating func start() -> RequestAction {
      guard case .idle(let idle) = self.request else { return .none }
      self.request = idle.finishRequested ? .halfClosed : .started
      return .startRPC(
        writes: idle.bufferedWrites,
        finish: idle.finishRequested,
        demand: idle.demand
      )
    }

    mutating func write(_ message: any Sendable) -> RequestAction {
      switch self.request {
      case .idle(var idle):
        guard !idle.finishRequested else { return .none }
        idle.bufferedWrites.append(message)
        self.request = .idle(idle)
        return .none
      case .started:
        return .write(message)
      case .halfClosed, .ended:
        return .none
      }
    }

    mutating func finish() -> RequestAction {
      switch self.request {
      case .idle(var idle):
        idle.finishRequested = true
        self.request = .idle(idle)
        return .none
      case .started:
        self.request = .halfClosed
        return .finish
      case .halfClosed, .ended:
        return .none
      }
    }

    /// Demand for `count` more messages (flow control); `count` ≤ 0 does nothing.
    mutating func receiveNextMessages(_ count: Int) -> RequestAction {
      guard count > 0 else { return .none }
      switch self.request {
      case .idle(var idle):
        idle.demand =
          idle.demand.addingReportingOverflow(count).overflow ? .max : idle.demand + count
        self.request = .idle(idle)
        return .none
      case .started, .halfClosed:
        return .receiveNextMessages(count)
      case .ended:
        return .none
      }
    }

    /// The application cancels (or the call itself, with `error`). Unless the call closed, what
    /// is pending is dropped and the cancel close is queued.
    ///
    /// - Returns: The action for the chain, and whether the owner must schedule a drain.
    mutating func cancel(
      closingWith error: GRPCError = .canceledByApp
    ) -> (RequestAction, scheduleDrain: Bool) {
      guard self.response == .open else { return (.none, false) }
      self.request = .ended
      self.response = .cancelled
      self.pending = [.close(trailers: nil, error: error)]
      self.next = 0
      self.closeReceived = true
      return (.cancel, self.scheduleDrain())
    }

    // MARK: Performing actions

    /// Gives the call its request path, once, when it is created.
    mutating func attach(head: any RequestLink) {
      self.head = head
    }

    /// Who performs `action`: the caller, when no thread is performing (the batch it returns),
    /// or the thread that is (`nil`: queued for it). Nothing is performed once the close was
    /// taken. Starting the RPC makes the call hold `owner`, itself, until its close.
    mutating func schedule(_ action: RequestAction, owner: any Sendable) -> Batch? {
      if case .none = action { return nil }
      guard let head = self.head else { return nil }
      if case .startRPC = action {
        self.keepAlive = owner
      }
      guard !self.performing else {
        self.queued.append(action)
        return nil
      }
      self.performing = true
      return Batch(first: action, head: head)
    }

    /// The performing thread is done with its batch: the actions queued meanwhile, or `nil`, and
    /// then the head to let go of if the close was taken meanwhile.
    mutating func performed() -> (next: Batch?, released: (any RequestLink)?) {
      guard !self.queued.isEmpty, let head = self.head else {
        self.queued = []
        self.performing = false
        guard self.releaseHeadWhenPerformed else { return (nil, nil) }
        self.releaseHeadWhenPerformed = false
        defer { self.head = nil }
        return (nil, self.head)
      }
      defer { self.queued = [] }
      return (Batch(first: self.queued[0], rest: self.queued.dropFirst(), head: head), nil)
    }

    // MARK: Responses

    /// A response from below.
    ///
    /// - Parameter withinQueue: It comes from a block that runs within the handler's queue,
    ///   where the owner drains at once rather than schedule a drain.
    /// - Returns: Whether the owner must drain (or schedule a drain).
    mutating func receive(_ delivery: Delivery, withinQueue: Bool = false) -> Bool {
      guard self.response == .open, !self.closeReceived else { return false }
      if case .close = delivery {
        self.closeReceived = true
      }
      if self.pending.capacity == 0 {
        // A unary call's headers, message and close: room for them in one allocation.
        self.pending.reserveCapacity(3)
      }
      self.pending.append(delivery)
      return self.scheduleDrain(hop: !withinQueue)
    }

    /// A message the handler's own task read from the stream handed to it (``ResponsePull``).
    ///
    /// The task takes it itself (`taken`) when the call would deliver it at once: the
    /// response half is open, no close came from below, and no drain runs, so every earlier
    /// response has been delivered. Otherwise it is received like any response: pending behind
    /// what a drain still delivers, or dropped after a close.
    ///
    /// - Returns: Whether the task takes the message. When it does not, no drain is to be
    ///   scheduled: the one running delivers the message, or the call is closing.
    mutating func receivePulled(_ message: any Sendable) -> Bool {
      if self.response == .open, !self.closeReceived, !self.draining {
        return true
      }
      let drain = self.receive(.message(message))
      assert(!drain, "a pulled message is queued only behind a running drain")
      return false
    }

    /// The next response to deliver, taken by the drain; `nil` ends the drain.
    ///
    /// Taking the close makes the machine terminal, and lets go of the chain (unless a thread
    /// is performing actions: what it has still to perform must reach the chain, so it lets go
    /// of the head when done) and of the call's hold on itself.
    mutating func nextDelivery() -> (delivery: Delivery, released: Released?)? {
      guard self.next < self.pending.count else {
        self.pending.removeAll(keepingCapacity: true)
        self.next = 0
        self.draining = false
        return nil
      }
      // Moved out rather than copied: the message is retained once, by whoever delivers it.
      var delivery = Delivery.didWrite
      swap(&delivery, &self.pending[self.next])
      self.next += 1
      guard case .close = delivery else { return (delivery, nil) }
      self.response = .closed
      self.request = .ended
      self.pending = []
      self.next = 0
      let released = Released(head: self.performing ? nil : self.head, owner: self.keepAlive)
      self.keepAlive = nil
      if self.performing {
        self.releaseHeadWhenPerformed = true
      } else {
        self.head = nil
        self.queued = []
      }
      return (delivery, released)
    }

    private mutating func scheduleDrain(hop: Bool = true) -> Bool {
      guard !self.draining else { return false }
      self.draining = true
      if hop {
        self.drainsScheduled += 1
      }
      return true
    }
  }
}
