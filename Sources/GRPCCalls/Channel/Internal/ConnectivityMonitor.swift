internal import Dispatch

/// The connectivity state of one channel key of a pool and its observers.
///
/// It outlives the channels that serve the key (the pool closes an idle one and opens another
/// for the next call), so that an observer follows the key, not one channel. The channels'
/// connections report to it through a ``ConnectivityReporter``.
final class ConnectivityMonitor: Sendable {
  private struct State {
    var machine = ConnectivityStateMachine()
    var observers: [Int: Observer] = [:]
    var nextObserver = 0
  }

  /// Where an observer is told of changes.
  enum Observer: Sendable {
    case stream(AsyncStream<GRPCConnectivityState>.Continuation)
    case callback(DispatchQueue, @Sendable (GRPCConnectivityState) -> Void)

    /// Passes `state` on without running the observer's code here.
    fileprivate func enqueue(_ state: GRPCConnectivityState) {
      switch self {
      case .stream(let continuation):
        continuation.yield(state)
      case .callback(let queue, let handler):
        queue.async { handler(state) }
      }
    }

    /// Ends a stream after its last state; called outside the lock, as a stream's end runs its
    /// termination handler (``removeObserver(_:)``) at once.
    fileprivate func finish() {
      if case .stream(let continuation) = self { continuation.finish() }
    }
  }

  private let state = LockedValue(State())

  var current: GRPCConnectivityState {
    self.state.withLock { $0.machine.state }
  }

  /// Whether the channel serving the key connected and went idle (``ConnectivityStateMachine/isDormant``).
  var isDormant: Bool {
    self.state.withLock { $0.machine.isDormant }
  }

  var hasObservers: Bool {
    self.state.withLock { !$0.observers.isEmpty }
  }

  /// Adds an observer, told of the current state at once and then of every change; returns
  /// its ID for ``removeObserver(_:)``.
  ///
  /// The pool calls it within its own lock, and a monitor already shut down finishes a stream
  /// observer here: give the stream its termination handler only after this returns.
  func addObserver(_ observer: Observer) -> Int {
    let (id, ended) = self.state.withLock { state in
      let id = state.nextObserver
      state.nextObserver += 1
      observer.enqueue(state.machine.state)
      if state.machine.state == .shutdown {
        return (id, true)
      }
      state.observers[id] = observer
      return (id, false)
    }
    if ended { observer.finish() }
    return id
  }

  func removeObserver(_ id: Int) {
    self.state.withLock { $0.observers.removeValue(forKey: id) }?.finish()
  }

  /// Applies `event` to the machine, returns its result and tells the observers of the change it makes, if any.
  ///
  /// Changes are enqueued to the observers under the lock: the lock is what puts them in the
  /// machine's order, and enqueuing (a queue's `async`, a stream's `yield`) runs none of the
  /// observer's code.
  func update<Result>(
    _ event: (inout ConnectivityStateMachine) -> (Result, GRPCConnectivityState?)
  ) -> Result {
    let (result, ended) = self.state.withLock { state in
      let (result, change) = event(&state.machine)
      guard let change else { return (result, [Observer]()) }
      for observer in state.observers.values {
        observer.enqueue(change)
      }
      guard change == .shutdown else { return (result, []) }
      defer { state.observers = [:] }
      return (result, Array(state.observers.values))
    }
    for observer in ended {
      observer.finish()
    }
    return result
  }

  /// Applies an event that returns only the change (``update(_:)``).
  func apply(_ event: (inout ConnectivityStateMachine) -> GRPCConnectivityState?) {
    self.update { machine in ((), event(&machine)) }
  }

  /// A reporter for a new channel, counting its connections in `metrics`; they count for the
  /// state once ``ConnectivityReporter/start()`` is called.
  func makeReporter(metrics: ChannelMetrics) -> ConnectivityReporter {
    ConnectivityReporter(
      monitor: self,
      channel: self.update { ($0.makeChannelID(), nil) },
      metrics: metrics
    )
  }
}

/// What one channel's connections tell its key's ``ConnectivityMonitor`` and its metrics,
/// called on their event loops.
struct ConnectivityReporter: Sendable {
  let monitor: ConnectivityMonitor
  let channel: Int
  let metrics: ChannelMetrics

  /// The channel started running its connections.
  func start() {
    self.monitor.apply { $0.channelStarted(self.channel) }
  }

  /// The pool closed the channel.
  func channelClosed() {
    self.monitor.apply { $0.channelClosed(self.channel) }
  }

  /// A connection began connecting; returns its ID for the events that follow.
  func attemptStarted() -> Int {
    self.monitor.update { $0.attemptStarted(channel: self.channel) }
  }

  func established(_ connection: Int) {
    self.metrics.connectionEstablished()
    self.monitor.apply { $0.established(channel: self.channel, connection: connection) }
  }

  func wentAway(_ connection: Int) {
    self.monitor.apply { $0.wentAway(channel: self.channel, connection: connection) }
  }

  /// The connection failed before it could connect (its handlers could not be set up).
  func abandoned(_ connection: Int) {
    self.metrics.connectionClosed(established: false)
    self.monitor.apply {
      $0.closed(channel: self.channel, connection: connection, established: false, broke: false)
    }
  }

  func closed(_ connection: Int, record: ConnectionRecord) {
    let established = record.established
    let broke = record.brokeUnderCalls
    self.metrics.connectionClosed(established: established)
    self.monitor.apply {
      $0.closed(
        channel: self.channel,
        connection: connection,
        established: established,
        broke: broke
      )
    }
  }
}
