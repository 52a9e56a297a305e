extension GRXWriter {
  /// What a writer has to deliver and whether it may: one value at a time, in order, only while
  /// started, and a finish after everything before it. The owner delivers outside its lock,
  /// one performer at a time (the first thread to find none performs), so a writeable may pause
  /// or finish the writer from inside a callback.
  struct StateMachine {
    enum Item {
      case value(any Sendable)
      case finish((any Error)?)
    }

    private(set) var state: GRXWriterState = .notStarted
    private var pending: [Item] = []
    private var nextIndex = 0
    /// Whether a finish is queued (or delivered): nothing after it is accepted.
    private var finishQueued = false
    private var performing = false

    /// What starting did.
    enum StartResult {
      /// Started: drain.
      case started
      /// It had been started (or finished) before; the writeable is not the writer's.
      case refused(GRXWriterState)
    }

    mutating func start() -> StartResult {
      guard self.state == .notStarted else { return .refused(self.state) }
      self.state = .started
      return .started
    }

    /// Queues `item` after those before it. Ignored once a finish is queued.
    mutating func enqueue(_ item: Item) {
      guard !self.finishQueued, self.state != .finished else { return }
      if case .finish = item { self.finishQueued = true }
      self.pending.append(item)
    }

    /// Finishes now: values not yet delivered are dropped and the finish goes next (or, if the
    /// writer never started, nowhere). Returns whether a writeable is owed the finish.
    mutating func finishNow(_ error: (any Error)?) -> Bool {
      guard self.state != .finished, !self.finishQueued || self.nextIndex < self.pending.count
      else {
        return false
      }
      self.pending = [.finish(error)]
      self.nextIndex = 0
      self.finishQueued = true
      if self.state == .notStarted {
        self.state = .finished
        self.pending = []
        return false
      }
      // Paused writers deliver this one: finishing is not a value to hold back.
      self.state = .started
      return true
    }

    /// What finishing for the owner left to do.
    enum OwnerFinish {
      /// The writer had finished already: nothing.
      case none
      /// The writer never started: no writeable to tell.
      case unstarted
      /// Tell the writeable `writesFinished(withError:)` with this error.
      case deliver((any Error)?)
    }

    /// Finishes now, for an owner that delivers the finish itself (elsewhere, later): values
    /// not yet delivered are dropped; a finish already queued (a paused writer holds it) keeps
    /// its own error.
    mutating func finishForOwner(_ error: (any Error)?) -> OwnerFinish {
      guard self.state != .finished else { return .none }
      var owed = error
      if self.finishQueued, case .finish(let queued)? = self.pending[self.nextIndex...].last {
        owed = queued
      }
      let started = self.state != .notStarted
      self.state = .finished
      self.pending = []
      self.nextIndex = 0
      self.finishQueued = true
      return started ? .deliver(owed) : .unstarted
    }

    /// What setting the state by hand did.
    enum SetStateResult {
      case none
      /// Resumed: drain.
      case resumed
      /// Stopped by hand: release the writeable without another callback.
      case stopped
    }

    mutating func set(_ state: GRXWriterState) -> SetStateResult {
      switch (self.state, state) {
      case (.finished, _), (.notStarted, .started), (.notStarted, .paused):
        // Finished absorbs everything; only start(with:) starts a writer.
        return .none
      case (_, .finished):
        self.state = .finished
        self.pending = []
        self.nextIndex = 0
        return .stopped
      case (.paused, .started):
        self.state = .started
        return .resumed
      case (.started, .paused):
        self.state = .paused
        return .none
      default:
        return .none
      }
    }

    /// Claims the performer's role if there is something to deliver and no one delivering.
    mutating func beginDelivery() -> Bool {
      guard !self.performing, self.state == .started, self.nextIndex < self.pending.count else {
        return false
      }
      self.performing = true
      return true
    }

    /// The performer's next item, or `nil` when it must stop (nothing left, paused, finished):
    /// it then gives up the role. Taking the finish finishes the writer.
    mutating func nextDelivery() -> Item? {
      guard self.state == .started, self.nextIndex < self.pending.count else {
        self.performing = false
        return nil
      }
      let item = self.pending[self.nextIndex]
      self.nextIndex += 1
      if self.nextIndex == self.pending.count {
        self.pending.removeAll(keepingCapacity: true)
        self.nextIndex = 0
      }
      if case .finish = item {
        self.state = .finished
        self.pending = []
        self.nextIndex = 0
      }
      return item
    }
  }
}
