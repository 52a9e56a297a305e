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
  private let state: LockedValue<StateMachine>

  init(rest: InterceptorChain, previous: any ResponseLink) {
    self.state = LockedValue(StateMachine(previous: previous, rest: rest))
  }

  /// The queue an interceptor's default ``GRPCInterceptor/dispatchQueue`` targets: where the
  /// element above runs its responses (the response handler's queue for the first interceptor;
  /// below an inline interceptor, where that one's responses go), or none when that is the main
  /// queue or the call delivers its responses inline (the async faces).
  ///
  /// A response then reaches the handler in one thread hand-off instead of two: the
  /// interceptor's block runs within the target, so what it passes up is delivered at the end
  /// of that block (`StateMachine.PassedOn`; gRPC Objective-C targets its call queues at the
  /// handler's queue too). The interceptor's events still run one at a time on its own queue,
  /// but not while a block of the target runs.
  var defaultQueueTarget: DispatchQueue? {
    guard let queue = self.state.withLock({ $0.previous })?.deliveryQueue else { return nil }
    return queue === DispatchQueue.main ? nil : queue
  }

  /// Where this manager's interceptor runs the responses it passes up, for an interceptor below:
  /// its queue, or for an inline interceptor, wherever the element above runs them.
  fileprivate var deliveryQueue: DispatchQueue? {
    let (queue, above) = self.state.withLock { state -> (DispatchQueue?, (any ResponseLink)?) in
      switch state.mode {
      case .queued(let queue, _): (queue, nil)
      case .inline: (nil, state.previous)
      case .unattached: (nil, nil)
      }
    }
    return queue ?? above?.deliveryQueue
  }

  /// Attaches the interceptor the factory made and starts delivering to it.
  func attach(_ interceptor: GRPCInterceptor) {
    // What arrived while the factory made the interceptor runs first, on its queue.
    if let queue = self.state.withLock({ $0.attach(interceptor) }) {
      queue.async { self.runBursts() }
    }
  }

  /// The factory made no interceptor: this manager is dropped.
  func discard() {
    // Released after the lock: the events waiting may hold messages whose deinitializers run.
    let released = self.state.withLock { $0.discard() }
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
    self.passResponse(.initialMetadata(initialMetadata))
  }

  /// Passes a response message to the previous interceptor.
  public func forwardPreviousInterceptor(data: any Sendable) {
    self.passResponse(.message(data))
  }

  /// Closes the call towards the previous interceptor; only the first close passes.
  public func forwardPreviousInterceptorClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.passResponse(.close(trailers: trailingMetadata, error: error))
  }

  /// Tells the previous interceptor a request message was accepted (flow control).
  public func forwardPreviousInterceptorDidWriteData() {
    self.passResponse(.didWrite)
  }

  /// Discards the rest of the chain below this interceptor, cancelling it if it still runs, so
  /// that the next ``startNextInterceptor(requestOptions:callOptions:)`` makes it anew: a retry.
  ///
  /// The interceptors below are made again from their factories and a new RPC starts; nothing
  /// the discarded ones still send reaches this interceptor. The interceptor passes the start,
  /// its writes and the finish on again, and decides what of each attempt travels up (for
  /// example, holding responses back until an attempt succeeds).
  public func resetNextInterceptor() {
    let discarded = self.state.withLock { $0.resetNext() }
    discarded?.cancel()
  }

  /// The interceptor is done: its neighbours are released and nothing reaches it any more.
  public func shutDown() {
    let released = self.state.withLock { $0.shutDown() }
    released.cancelOrphan()
    withExtendedLifetime(released) {}
  }

  // MARK: Forwarding

  private func passResponse(_ response: CallResponse) {
    let (step, released) = self.state.withLock { $0.respond(response) }
    if case .deliver(let previous) = step {
      previous.receive(response, withinDeliveryQueue: false)
    }
    released?.cancelOrphan()
    withExtendedLifetime(released) {}
  }

  /// Passes a request on where the interceptor's events run, after the event running now (if
  /// the interceptor passes it from one): making the next interceptor calls its factory, which
  /// so happens once, in order with every other request, and never under the lock.
  private func passRequest(_ request: StateMachine.Request, _ outgoing: RequestBatch.Request) {
    self.run {
      guard
        case .makeNext(let rest, let attempt) = self.state.withLock({
          $0.request(request, outgoing)
        })
      else { return }
      let made = rest.makeHead(previous: AttemptLink(manager: self, attempt: attempt))
      let current = self.state.withLock { $0.madeNext(made, attempt: attempt, for: outgoing) }
      if !current {
        made.cancel()
      }
    }
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
    withinQueue: Bool = false,
    _ event: @escaping @Sendable (GRPCInterceptor) -> Void
  ) {
    self.run(withinQueue: withinQueue) {
      if let interceptor = self.state.withLock({ $0.interceptor(forAttempt: attempt) }) {
        event(interceptor)
      }
    }
  }

  /// The elements below `attempt` closed towards this interceptor: they need no cancel.
  fileprivate func nextDidClose(attempt: Int) {
    self.state.withLock { $0.nextDidClose(attempt: attempt) }
  }

  /// Runs `work` where the interceptor's events run: on the interceptor's queue, in one block
  /// with whatever else arrived before that block ran; or, inline, on this thread unless another
  /// is running them (it then runs `work` after what it has).
  ///
  /// One block at a time per manager keeps the events in order on a concurrent queue too, and
  /// needs no queue of the manager's own (one per interceptor per call, made and freed for
  /// nothing). `withinQueue`: a response from a block of the interceptor below, which runs
  /// within this interceptor's queue; it runs there if nothing else is pending.
  private func run(withinQueue: Bool = false, _ work: @escaping StateMachine.Work) {
    switch self.state.withLock({ $0.run(work) }) {
    case .now:
      work()
      self.runBursts()
    case .schedule(let queue):
      if withinQueue {
        self.runBursts()
      } else {
        queue.async { self.runBursts() }
      }
    case .later:
      break
    }
  }

  /// Runs the events waiting to run, a burst at a time, delivering what each burst passed on;
  /// when nothing is left, lets go (of the thread, inline; of the scheduled block, queued).
  private func runBursts() {
    while true {
      switch self.state.withLock({ $0.nextBurst() }) {
      case .run(let events):
        for event in events {
          event()
        }
      case .deliver(let passedOn):
        passedOn.deliver()
      case .done:
        return
      }
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

  func receive(_ response: CallResponse, withinDeliveryQueue: Bool) {
    if case .close = response {
      self.manager.nextDidClose(attempt: self.attempt)
    }
    self.manager.onInterceptor(attempt: self.attempt, withinQueue: withinDeliveryQueue) {
      interceptor in
      switch response {
      case .initialMetadata(let metadata):
        interceptor.didReceiveInitialMetadata(metadata)
      case .message(let message):
        interceptor.didReceiveData(message)
      case .didWrite:
        interceptor.didWriteData()
      case .close(let trailers, let error):
        interceptor.didClose(trailingMetadata: trailers, error: error)
      }
    }
  }
}
