internal import Dispatch
internal import GRPCCore
internal import Logging

/// A gRPC call you drive directly: start it, write messages, finish or cancel it.
///
/// Responses arrive on the handler's queue: initial metadata, then messages, then one close.
/// Every method is thread-safe and may be called from any thread. Requests are applied in the
/// order they are made (program order on each thread, one total order across threads); writes
/// made before ``start()`` are sent after it. Misuse (starting twice, writing after
/// ``finish()``) does nothing but log a warning. You need not keep the call alive: once started
/// it runs to its close on its own.
///
/// ```swift
/// let request = try GRPCRequestOptions(host: "localhost:50051", path: "/echo.Echo/Get")
/// var options = GRPCCallOptions()
/// options.transportType = .insecure
/// options.timeout = 5
/// let call = GRPCCall2(requestOptions: request, responseHandler: handler, callOptions: options)
/// call.start()
/// call.writeData(requestBytes)
/// call.finish()
/// ```
public final class GRPCCall2: Sendable {
  /// Where the call goes, as given at creation.
  public let requestOptions: GRPCRequestOptions

  /// The call's options, as given at creation.
  public let callOptions: GRPCCallOptions

  fileprivate let handler: any GRPCResponseHandler
  /// Whether responses are delivered on the thread that produced them rather than on the
  /// handler's queue: for the library's own async faces, whose callbacks only resume
  /// continuations.
  fileprivate let deliversInline: Bool
  /// The call's whole state, behind its one lock.
  private let state: LockedValue<StateMachine>

  /// Creates a call; nothing is sent until ``start()``.
  ///
  /// The first interceptor of ``GRPCCallOptions/interceptorFactories`` (then of the global
  /// ones, then of the transport's own) is made now; each next one when the one above it first
  /// passes a request on.
  ///
  /// - Parameters:
  ///   - requestOptions: The server and method.
  ///   - responseHandler: Receives the responses on its queue.
  ///   - callOptions: The call's options; defaults to ``GRPCCallOptions/init()``.
  ///   - channelPool: The pool to take the channel from; defaults to the shared pool.
  public convenience init(
    requestOptions: GRPCRequestOptions,
    responseHandler: any GRPCResponseHandler,
    callOptions: GRPCCallOptions = GRPCCallOptions(),
    channelPool: GRPCChannelPool = .shared
  ) {
    self.init(
      requestOptions: requestOptions,
      responseHandler: responseHandler,
      callOptions: callOptions,
      channelPool: channelPool,
      deliveringInline: false
    )
  }

  /// Creates a call whose responses may be delivered inline, on the thread that produced them.
  ///
  /// For handlers that do almost nothing and never block (they resume continuations): the
  /// library's async faces. Callbacks of one call still never overlap and keep their order.
  package init(
    requestOptions: GRPCRequestOptions,
    responseHandler: any GRPCResponseHandler,
    callOptions: GRPCCallOptions,
    channelPool: GRPCChannelPool,
    deliveringInline: Bool
  ) {
    self.requestOptions = requestOptions
    self.callOptions = callOptions
    self.handler = responseHandler
    self.deliversInline = deliveringInline
    self.state = LockedValue(StateMachine())
    let (transportType, transport) = (callOptions.transportType, callOptions.transport)
    let globals = Self.globalInterceptors
    var factories =
      globals.isEmpty
      ? callOptions.interceptorFactories : callOptions.interceptorFactories + globals
    if let transport,
      let own = channelPool.config.transportRegistry.factory(for: transport)?.interceptorFactories
    {
      factories += own
    }
    let chain = InterceptorChain(
      factories: ArraySlice(factories),
      runner: .init(pool: channelPool, transportType: transportType, transport: transport)
    )
    // The chain answers to the call through a weak link: a call that is never started is freed
    // with its last reference, and one that runs holds itself until its close.
    let head = chain.makeHead(previous: CallLink(call: self))
    self.state.withLock { $0.attach(head: head) }
  }

  deinit {
    // Only a call that never started (or whose chain never closed) gets here with its chain.
    let (head, buffered) = self.state.withLock { machine -> ((any RequestLink)?, Int) in
      guard case .idle(let idle) = machine.request else { return (machine.head, 0) }
      return (machine.head, idle.bufferedWrites.count + (idle.finishRequested ? 1 : 0))
    }
    if buffered > 0 {
      Self.logger.warning(
        "A call to \(self.requestOptions.path) was released without start(): its \(buffered) buffered request(s) were never sent. Call start() to send them."
      )
    }
    // Lets the interceptors end; nothing reaches a handler, the call is gone.
    head?.cancel()
  }

  /// Starts the call: passes it through the interceptors, then fetches the auth token if any,
  /// takes a channel and opens the stream.
  ///
  /// Calling it again does nothing but log a warning.
  public func start() {
    self.handle { machine in
      switch machine.request {
      case .started, .halfClosed:
        if machine.shouldReport(.startTwice) {
          Self.logger.warning(
            "start() was called twice on a call to \(self.requestOptions.path); the second call does nothing"
          )
        }
      case .idle, .ended:
        break
      }
      return machine.start()
    }
  }

  /// Sends a request message: `Data` (or `[UInt8]`) for raw calls, a typed message when the
  /// options carry a ``GRPCCallOptions/marshaller``.
  ///
  /// Before ``start()`` the message is buffered; after ``finish()`` or ``cancel()`` it is dropped
  /// (a write after `finish()` logs a warning, once per call).
  public func writeData(_ data: any Sendable) {
    self.handle { machine in
      let action = machine.write(data)
      if case .none = action, machine.finishWasRequested, machine.shouldReport(.writeAfterFinish) {
        Self.logger.warning(
          "writeData(_:) after finish() on a call to \(self.requestOptions.path) is dropped"
        )
      }
      return action
    }
  }

  /// Half-closes the call: no more request messages. Responses keep arriving.
  public func finish() {
    self.handle { $0.finish() }
  }

  /// Asks for `count` more response messages, when flow control is enabled.
  ///
  /// Demand accumulates and may be given before ``start()``. `count` ≤ 0 does nothing, and so
  /// does every call when flow control is off for the RPC (``GRPCCallOptions/enableFlowControl``
  /// as the last interceptor passed the options on).
  public func receiveNextMessages(_ count: Int) {
    guard count > 0 else { return }
    self.handle { $0.receiveNextMessages(count) }
  }

  /// Cancels the call.
  ///
  /// Unless the call had already closed, it closes with `CANCELLED` (1), "Canceled by app", and
  /// nil trailers; responses not yet delivered are dropped. After close it does nothing.
  public func cancel() {
    self.cancel(closingWith: .canceledByApp)
  }

  /// Cancels the RPC and closes the call with `error` instead of "Canceled by app".
  func cancel(closingWith error: GRPCError) {
    var drain = false
    self.handle { machine in
      let (action, scheduleDrain) = machine.cancel(closingWith: error)
      drain = scheduleDrain
      return action
    }
    if drain {
      self.scheduleDrain()
    }
  }

  // MARK: Performing requests

  /// Feeds an event to the machine and performs what it decided, after the lock is released:
  /// this thread performs the batch the machine gives it, and what other threads queue
  /// meanwhile (``StateMachine/schedule(_:owner:)``).
  private func handle(_ event: (inout StateMachine) -> StateMachine.RequestAction) {
    var next = self.state.withLock { machine in
      let action = event(&machine)
      return machine.schedule(action, owner: self)
    }
    while let batch = next {
      for action in batch {
        Self.perform(
          action,
          on: batch.head,
          requestOptions: self.requestOptions,
          callOptions: self.callOptions
        )
      }
      let released: (any RequestLink)?
      (next, released) = self.state.withLock { $0.performed() }
      withExtendedLifetime(released) {}
    }
  }

  private static func perform(
    _ action: StateMachine.RequestAction,
    on head: any RequestLink,
    requestOptions: GRPCRequestOptions,
    callOptions: GRPCCallOptions
  ) {
    switch action {
    case .none:
      return
    case .startRPC(let writes, let finish, let demand):
      head.start(
        requestOptions: requestOptions,
        callOptions: callOptions,
        writes: writes,
        finish: finish
      )
      if demand > 0 {
        head.receiveNextMessages(demand)
      }
    case .write(let message):
      head.write(message)
    case .finish:
      head.finish()
    case .receiveNextMessages(let count):
      head.receiveNextMessages(count)
    case .cancel:
      head.cancel()
    }
  }

  // MARK: Delivering responses

  /// A response from the chain below.
  ///
  /// `inSenderBlock`: it comes from a block that runs within the handler's queue (one of the
  /// first interceptor's default queue, see ``GRPCInterceptorManager/defaultQueueTarget``, or
  /// the job of a task reading a flooding stream there); if nothing else is pending it is
  /// delivered there.
  fileprivate func receive(_ delivery: StateMachine.Delivery, inSenderBlock: Bool = false) {
    let schedule = self.state.withLock {
      $0.receive(delivery, withinQueue: inSenderBlock || self.deliversInline)
    }
    guard schedule else { return }
    if inSenderBlock {
      self.drain()
    } else {
      self.scheduleDrain()
    }
  }

  /// A message the handler's task read from the stream handed to it: `true` when that task
  /// takes it directly (``StateMachine/receivePulled(_:)``).
  fileprivate func receivePulled(_ message: any Sendable) -> Bool {
    self.state.withLock { $0.receivePulled(message) }
  }

  /// How many hops to the handler's queue the call has made so far, and how many responses
  /// wait for the next one (for tests).
  var deliveryCounts: (drains: Int, pending: Int) {
    self.state.withLock { ($0.drainsScheduled, $0.pendingCount) }
  }

  /// The queue the handler's callbacks run on, unless the call delivers inline.
  fileprivate var deliveryQueue: DispatchQueue? {
    self.deliversInline ? nil : self.handler.dispatchQueue
  }

  private func scheduleDrain() {
    if self.deliversInline {
      self.drain()
    } else {
      self.handler.dispatchQueue.async { self.drain() }
    }
  }

  /// Delivers every pending response, one at a time, until none is left.
  ///
  /// Each is taken under the lock and delivered after it is released, so a cancel made between
  /// two deliveries drops the rest. What the close lets go of (the chain, the call's hold on
  /// itself) is released after the handler's last callback.
  private func drain() {
    while true {
      guard let (delivery, released) = self.state.withLock({ $0.nextDelivery() }) else { return }
      switch consume delivery {
      case .initialMetadata(let metadata):
        self.handler.didReceiveInitialMetadata(metadata)
      case .message(let message):
        self.handler.didReceiveData(message)
      case .didWrite:
        self.handler.didWriteData()
      case .close(let trailers, let error):
        self.handler.didClose(trailingMetadata: trailers, error: error)
        withExtendedLifetime(released) {}
      }
    }
  }
}

/// The top of a call's response path: passes responses to the call, without keeping it alive.
private final class CallLink: ResponseLink {
  weak let call: GRPCCall2?

  init(call: GRPCCall2) {
    self.call = call
  }

  var deliveryQueue: DispatchQueue? {
    self.call?.deliveryQueue
  }

  func offer(_ pull: ResponsePull) -> Bool {
    guard let call = self.call, call.deliversInline,
      let handler = call.handler as? any ResponsePulling
    else { return false }
    return handler.take(pull)
  }

  func receivePulled(_ message: any Sendable) -> Bool {
    // No type check: only a chain without interceptors hands the stream over, so the message
    // is the call's own marshaller's.
    self.call?.receivePulled(message) ?? false
  }

  func receive(_ response: CallResponse, withinDeliveryQueue: Bool) {
    guard let call = self.call else { return }
    // The marshaller first: a call without one (bytes) binds no copy of each message.
    if let marshaller = call.callOptions.marshaller, case .message(let message) = response,
      !marshaller.accepts(response: message)
    {
      // An interceptor passed on something the handler cannot take: say so rather than drop it.
      call.cancel(
        closingWith: GRPCError(
          code: .internalError,
          message: "Received a \(type(of: message)) as a response of a call whose responses are "
            + "\(marshaller.responseDescription): an interceptor passed on a message of another type"
        )
      )
      return
    }
    call.receive(response, inSenderBlock: withinDeliveryQueue)
  }
}
