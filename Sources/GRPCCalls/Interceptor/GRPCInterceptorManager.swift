internal import Dispatch
internal import Foundation
public import GRPCCore

/// Connects one interceptor to its neighbours in a call's chain (gRFC L50).
///
/// The library makes one manager per interceptor and hands it to the factory. The interceptor
/// passes requests on with the `…NextInterceptor` methods and responses back with the
/// `forwardPreviousInterceptor…` methods; both may be called from any thread. The next
/// interceptor is made when this one first passes a request on, so an interceptor that answers
/// a call itself causes no network activity.
///
/// The manager delivers the interceptor's own events on the interceptor's
/// ``GRPCInterceptor/dispatchQueue``, in one block at a time: one event at a time, in order, even
/// when that queue is concurrent. Events that arrive together run in one block on that queue (a
/// unary call's start, message and finish; its headers, message and close), and the requests the
/// interceptor passes on while it handles them go to the next element together when the block
/// ends. An interceptor that ``GRPCInterceptor/executesInline`` gets them on the thread that
/// delivers them, still one at a time and in order: a thread that finds another one running the
/// interceptor leaves its event to that thread. It drops what the call's state does not allow
/// (see <doc:WritingAnInterceptor>): a write before start, anything after the close. The close
/// travels up at most once. An interceptor may retry: ``resetNextInterceptor()`` discards the
/// chain below, and the next start makes it anew.
///
/// Once the close has passed up through it, the manager shuts down by itself: it lets go of its
/// neighbours and of the interceptor, so a chain ends with its call even when an interceptor
/// overrides ``GRPCInterceptor/didClose(trailingMetadata:error:)`` without calling `super`.
/// ``shutDown()`` does the same earlier, for an interceptor that is done before then; nothing
/// reaches the interceptor after it.
public final class GRPCInterceptorManager: Sendable {
  private let state: LockedValue<State>

  private struct State {
    var machine = StateMachine()
    var interceptor: GRPCInterceptor?
    var previous: (any ResponseLink)?
    /// The elements below, made from `rest` on the first request this attempt passes on.
    var next: (any RequestLink)?
    var nextMade = false
    /// Whether the elements below closed towards this interceptor (this attempt).
    var nextClosed = false
    /// The chain below, not made yet; kept so that a retry can make it anew.
    var rest: InterceptorChain?
    /// Counts ``resetNextInterceptor()``: responses from an earlier attempt's elements are
    /// dropped.
    var attempt = 0
    /// Whether the interceptor runs its events on the threads that deliver them.
    var inline = false
    /// Whether the interceptor's queue targets the queue the element above delivers on, so that
    /// the responses its blocks pass up are delivered in them (see `ResponseHandOff`).
    var targetsAbove = false
    /// The interceptor's queue, once it is attached. Kept after the shutdown lets go of the
    /// interceptor, so that events arriving late still drain (into nothing) instead of waiting
    /// in `pending`, which would keep the manager alive.
    var queue: DispatchQueue?
    /// The thread running the interceptor's events now: an inline interceptor's deliverer, or
    /// the block on its queue.
    var performer: pthread_t?
    /// Events waiting to run: those that came before the interceptor was attached, while a
    /// thread ran it (inline), or since its block was scheduled (queued).
    var pending: [@Sendable () -> Void] = []
    /// Whether a block that runs `pending` is scheduled or running on the interceptor's queue
    /// (always for a queued interceptor; for an inline one, for events that came before it was
    /// attached).
    var drainScheduled = false
    /// Requests passed on by the events running now, delivered when they have run.
    var outbox = RequestBatch()

    /// Whether this thread is the one running the interceptor's events now.
    var performerIsThisThread: Bool {
      self.performer.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// Shuts the manager down and hands back what it held, to be released after the lock.
    mutating func release() -> Released {
      self.machine.shutDown()
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

  /// What a manager let go of; released outside its lock, since deinitializers may run.
  private struct Released {
    var interceptor: GRPCInterceptor?
    var previous: (any ResponseLink)?
    var next: (any RequestLink)?
    var rest: InterceptorChain?
    /// The elements below if they have not closed: nothing would ever read what they answer,
    /// so they are cancelled (a cancel the interceptor passed on from outside its events may
    /// still be waiting for its block, which the shutdown drops).
    var orphan: (any RequestLink)?

    func cancelOrphan() {
      self.orphan?.cancel()
    }
  }

  init(rest: InterceptorChain, previous: any ResponseLink) {
    self.state = LockedValue(State(previous: previous, rest: rest))
  }

  /// The queue an interceptor's default ``GRPCInterceptor/dispatchQueue`` targets: where the
  /// element above runs its responses (the response handler's queue for the first interceptor;
  /// below an inline interceptor, where that one's responses go), or none when that is the main
  /// queue or the call delivers its responses inline (the async faces).
  ///
  /// A response then reaches the handler in one thread hand-off instead of two: the
  /// interceptor's block runs within the target, so what it passes up is delivered in that block
  /// (see `ResponseHandOff`; gRPC Objective-C targets its call queues at the handler's queue
  /// too). The interceptor's events still run one at a time on its own queue, but not while a
  /// block of the target runs.
  var defaultQueueTarget: DispatchQueue? {
    guard let queue = self.state.withLock({ $0.previous })?.deliveryQueue else { return nil }
    return queue === DispatchQueue.main ? nil : queue
  }

  /// Where this manager's interceptor runs the responses it passes up, for an interceptor below:
  /// its queue, or for an inline interceptor, wherever the element above runs them.
  fileprivate var deliveryQueue: DispatchQueue? {
    let (queue, previous) = self.state.withLock { state -> (DispatchQueue?, (any ResponseLink)?) in
      state.inline ? (nil, state.previous) : (state.queue, nil)
    }
    return queue ?? previous?.deliveryQueue
  }

  /// Attaches the interceptor the factory made and starts delivering to it.
  func attach(_ interceptor: GRPCInterceptor) {
    // What arrived while the factory made the interceptor runs first, on its queue.
    let waiting = self.state.withLock { state -> Bool in
      state.interceptor = interceptor
      state.inline = interceptor.executesInline
      state.targetsAbove = interceptor.targetsElementAbove
      state.queue = interceptor.dispatchQueue
      guard !state.pending.isEmpty else { return false }
      state.drainScheduled = true
      return true
    }
    if waiting {
      interceptor.dispatchQueue.async { self.drain() }
    }
  }

  /// The factory made no interceptor: this manager is dropped.
  func discard() {
    // Released after the lock: the events waiting may hold messages whose deinitializers run.
    let released = self.state.withLock { state in
      defer { state.pending = [] }
      return (state.release(), state.pending)
    }
    withExtendedLifetime(released) {}
  }

  // MARK: Requests, towards the transport

  /// Passes the start to the next interceptor (made now if it does not exist yet).
  public func startNextInterceptor(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions)
  {
    self.passRequest(.start, .start(requestOptions, callOptions))
  }

  /// Passes a request message to the next interceptor.
  public func writeNextInterceptor(_ data: any Sendable) {
    self.passRequest(.write, .write(data))
  }

  /// Tells the next interceptor no more request messages will come.
  public func finishNextInterceptor() {
    self.passRequest(.finish, .finish)
  }

  /// Cancels the rest of the chain below this interceptor.
  ///
  /// The interceptors below close towards this one with `CANCELLED`; this interceptor decides
  /// what, if anything, its own predecessor sees.
  public func cancelNextInterceptor() {
    self.passRequest(.cancel, .cancel)
  }

  /// Passes a flow-control demand for `count` more messages to the next interceptor.
  public func receiveNextInterceptorMessages(_ count: Int) {
    guard count > 0 else { return }
    self.passRequest(.receiveNextMessages, .receiveNextMessages(count))
  }

  // MARK: Responses, towards the application

  /// Passes the response headers to the previous interceptor.
  public func forwardPreviousInterceptor(initialMetadata: Metadata) {
    self.passResponse(.initialMetadata) { $0.initialMetadata(initialMetadata) }
  }

  /// Passes a response message to the previous interceptor.
  public func forwardPreviousInterceptor(data: any Sendable) {
    self.passResponse(.message) { $0.message(data) }
  }

  /// Closes the call towards the previous interceptor; only the first close passes.
  public func forwardPreviousInterceptorClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.passResponse(.close) { $0.close(trailers: trailingMetadata, error: error) }
  }

  /// Tells the previous interceptor a request message was accepted (flow control).
  public func forwardPreviousInterceptorDidWriteData() {
    self.passResponse(.didWrite) { $0.didWrite() }
  }

  /// Discards the rest of the chain below this interceptor, cancelling it if it still runs, so
  /// that the next ``startNextInterceptor(requestOptions:callOptions:)`` makes it anew: a retry.
  ///
  /// The interceptors below are made again from their factories and a new RPC starts; nothing
  /// the discarded ones still send reaches this interceptor. The interceptor passes the start,
  /// its writes and the finish on again, and decides what of each attempt travels up (for
  /// example, holding responses back until an attempt succeeds).
  public func resetNextInterceptor() {
    let discarded: (any RequestLink)? = self.state.withLock { state in
      guard !state.machine.isShutDown else { return nil }
      defer {
        state.next = nil
        state.nextMade = false
        state.nextClosed = false
        state.attempt += 1
        state.machine.restartRequests()
      }
      // What this burst passed on to the discarded elements would only reach them after the
      // cancel; it goes nowhere instead.
      if let next = state.next {
        state.outbox.removeAll(for: next)
      }
      return state.next
    }
    discarded?.cancel()
  }

  /// The interceptor is done: its neighbours are released and nothing reaches it any more.
  public func shutDown() {
    let released = self.state.withLock { $0.release() }
    released.cancelOrphan()
    withExtendedLifetime(released) {}
  }

  // MARK: Forwarding

  private func passResponse(
    _ response: StateMachine.Response,
    _ deliver: (any ResponseLink) -> Void
  ) {
    let (previous, inBlock, released) = self.state.withLock {
      state -> ((any ResponseLink)?, Bool, Released?) in
      guard let previous = state.previous, state.machine.pass(response) else {
        return (nil, false, nil)
      }
      // From this interceptor's block on its default queue, which runs within the queue the
      // element above delivers on; not from an inline interceptor or another thread.
      let inBlock = state.targetsAbove && !state.inline && state.performerIsThisThread
      guard case .close = response else { return (previous, inBlock, nil) }
      // The close is the last thing to travel up: the manager lets go of its neighbours and of
      // the interceptor itself, whether or not the interceptor calls `super` or shutDown().
      return (previous, inBlock, state.release())
    }
    if let previous {
      if inBlock {
        ResponseHandOff.passing(to: previous) { deliver(previous) }
      } else {
        deliver(previous)
      }
    }
    released?.cancelOrphan()
    withExtendedLifetime(released) {}
  }

  private func passRequest(_ request: StateMachine.Request, _ outgoing: RequestBatch.Request) {
    // Making the next interceptor calls its factory: do it where the interceptor's events run,
    // so it happens once and in order with every other request, and never under the lock.
    guard self.isRunningInterceptor else {
      self.run { self.passRequest(request, outgoing) }
      return
    }
    let decision: (next: (any RequestLink)?, rest: InterceptorChain?, attempt: Int) =
      self.state.withLock { state in
        guard state.machine.pass(request) else { return (nil, nil, 0) }
        if state.nextMade { return (state.next, nil, 0) }
        state.nextMade = true
        return (nil, state.rest, state.attempt)
      }
    var next = decision.next
    if let rest = decision.rest {
      let made = rest.makeHead(previous: AttemptLink(manager: self, attempt: decision.attempt))
      self.state.withLock { state in
        if !state.machine.isShutDown, state.attempt == decision.attempt {
          state.next = made
        }
      }
      next = made
    }
    if let next {
      // Delivered when the events running now are done (see `RequestBatch`).
      self.state.withLock { $0.outbox.append(outgoing, to: next) }
    }
  }

  /// Delivers the requests the events that just ran passed on.
  private func flushRequests() {
    let batch = self.state.withLock { state -> RequestBatch? in
      guard !state.outbox.isEmpty else { return nil }
      defer { state.outbox = RequestBatch() }
      return state.outbox
    }
    batch?.deliver()
  }
}

// The element above reaches the interceptor through its manager, where the interceptor's events
// run.
extension GRPCInterceptorManager: RequestLink {
  func start(
    requestOptions: GRPCRequestOptions,
    callOptions: GRPCCallOptions,
    writes: [any Sendable],
    finish: Bool
  ) {
    // One hop for the start and what came with it.
    self.onInterceptor { interceptor in
      interceptor.start(requestOptions: requestOptions, callOptions: callOptions)
      for message in writes {
        interceptor.writeData(message)
      }
      if finish {
        interceptor.finish()
      }
    }
  }

  func write(_ message: any Sendable) {
    self.onInterceptor { $0.writeData(message) }
  }

  func finish() {
    self.onInterceptor { $0.finish() }
  }

  func cancel() {
    self.onInterceptor { $0.cancel() }
  }

  func receiveNextMessages(_ count: Int) {
    self.onInterceptor { $0.receiveNextMessages(count) }
  }

  /// Runs `event` on the interceptor, where its events run, unless the manager has shut down
  /// by then, or `attempt` (for responses) is no longer the current one.
  fileprivate func onInterceptor(
    attempt: Int? = nil,
    inSenderBlock: Bool = false,
    _ event: @escaping @Sendable (GRPCInterceptor) -> Void
  ) {
    self.run(inSenderBlock: inSenderBlock) {
      let interceptor = self.state.withLock { state in
        attempt == nil || attempt == state.attempt ? state.interceptor : nil
      }
      if let interceptor {
        event(interceptor)
      }
    }
  }

  /// The elements below `attempt` closed towards this interceptor: they need no cancel.
  fileprivate func nextClosed(attempt: Int) {
    self.state.withLock { state in
      if state.attempt == attempt { state.nextClosed = true }
    }
  }

  /// Whether this thread is running the interceptor's events now.
  private var isRunningInterceptor: Bool {
    self.state.withLock { $0.performerIsThisThread }
  }

  /// Runs `work` where the interceptor's events run: on the interceptor's queue, in one block
  /// with whatever else arrived before that block ran; or, inline, on this thread unless another
  /// is running them (it then runs `work` after what it has).
  ///
  /// One block at a time per manager keeps the events in order on a concurrent queue too, and
  /// needs no queue of the manager's own (one per interceptor per call, made and freed for
  /// nothing). `inSenderBlock`: a response from the block of the interceptor below, which runs
  /// within this interceptor's queue; it runs there if nothing else is pending.
  private func run(inSenderBlock: Bool = false, _ work: @escaping @Sendable () -> Void) {
    enum Next {
      case now, later
      case schedule(DispatchQueue)
    }
    let next = self.state.withLock { state -> Next in
      // An inline interceptor whose early events still wait for their block runs them first.
      if state.inline, state.performer == nil, !state.drainScheduled {
        state.performer = pthread_self()
        return .now
      }
      state.pending.append(work)
      // Before the interceptor is attached there is no queue yet: `attach` schedules the block.
      guard !state.inline, !state.drainScheduled, let queue = state.queue else { return .later }
      state.drainScheduled = true
      return .schedule(queue)
    }
    switch next {
    case .now:
      work()
      self.flushRequests()
      self.runPending()
    case .schedule(let queue):
      if inSenderBlock {
        self.drain()
      } else {
        queue.async { self.drain() }
      }
    case .later:
      break
    }
  }

  /// The block on the interceptor's queue: runs what is pending as this thread's.
  private func drain() {
    self.state.withLock { $0.performer = pthread_self() }
    self.runPending()
  }

  /// Runs the events waiting to run, a burst at a time, passing on the requests each burst made;
  /// when none are left, lets go (of the thread, inline; of the scheduled block, queued).
  private func runPending() {
    while true {
      let batch = self.state.withLock { state -> [@Sendable () -> Void] in
        guard !state.pending.isEmpty else {
          state.performer = nil
          state.drainScheduled = false
          return []
        }
        defer { state.pending = [] }
        return state.pending
      }
      guard !batch.isEmpty else { return }
      for work in batch {
        work()
      }
      self.flushRequests()
    }
  }
}

/// What the elements below an interceptor answer to: its manager, for one attempt (see
/// ``GRPCInterceptorManager/resetNextInterceptor()``).
private final class AttemptLink: ResponseLink {
  let manager: GRPCInterceptorManager
  let attempt: Int

  init(manager: GRPCInterceptorManager, attempt: Int) {
    self.manager = manager
    self.attempt = attempt
  }

  var deliveryQueue: DispatchQueue? {
    self.manager.deliveryQueue
  }

  func initialMetadata(_ metadata: Metadata) {
    self.onInterceptor { $0.didReceiveInitialMetadata(metadata) }
  }

  func message(_ message: any Sendable) {
    self.onInterceptor { $0.didReceiveData(message) }
  }

  func didWrite() {
    self.onInterceptor { $0.didWriteData() }
  }

  func close(trailers: Metadata?, error: GRPCError?) {
    self.manager.nextClosed(attempt: self.attempt)
    self.onInterceptor { $0.didClose(trailingMetadata: trailers, error: error) }
  }

  private func onInterceptor(_ event: @escaping @Sendable (GRPCInterceptor) -> Void) {
    self.manager.onInterceptor(
      attempt: self.attempt,
      inSenderBlock: ResponseHandOff.isPassing(to: self),
      event
    )
  }
}
