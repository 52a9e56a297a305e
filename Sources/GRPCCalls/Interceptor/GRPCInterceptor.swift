public import Dispatch
public import GRPCCore

/// The base class of every interceptor: it passes each event on unchanged (gRFC L50).
///
/// Subclass it and override the events you want to see or change; call `super` (or the
/// ``manager``'s forwarding methods) to pass an event on, or don't, to stop it. Requests travel
/// towards the transport, responses towards the application. All of one interceptor's events
/// run one at a time on ``dispatchQueue``, so its state needs no lock when only its events touch
/// it.
///
/// ```swift
/// final class AuthInterceptor: GRPCInterceptor, @unchecked Sendable {
///   let token: String
///
///   init(manager: GRPCInterceptorManager, token: String) {
///     self.token = token
///     super.init(manager: manager)
///   }
///
///   override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
///     var options = callOptions
///     options.initialMetadata.replaceOrAddString("Bearer \(self.token)", forKey: "authorization")
///     super.start(requestOptions: requestOptions, callOptions: options)
///   }
/// }
/// ```
///
/// The call's request side moves through *initialized* → *started* → *half-closed* and ends
/// *finished* when the close passes up; see the "Writing an interceptor" article for which
/// events each state allows.
open class GRPCInterceptor: @unchecked Sendable {
  // @unchecked: a subclass's state is touched only by its events, which the manager runs one
  // at a time on `dispatchQueue`; the base class itself holds only constants.

  /// Passes this interceptor's events on to its neighbours.
  public let manager: GRPCInterceptorManager

  /// The queue every event of this interceptor runs on (unless it ``executesInline``).
  public let dispatchQueue: DispatchQueue

  /// Whether the events run on the thread that delivers them instead of on ``dispatchQueue``:
  /// still one at a time and in order, but with no hop to another thread (see
  /// <doc:WritingAnInterceptor>, "Running inline").
  public let executesInline: Bool

  /// Whether ``dispatchQueue`` is the default one, targeting the queue of the element above.
  let targetsElementAbove: Bool

  /// Creates an interceptor.
  ///
  /// - Parameters:
  ///   - manager: The manager the factory was given.
  ///   - dispatchQueue: The queue the events run on. It may be concurrent: the manager still
  ///     delivers one event at a time. By default, a new serial queue that targets the queue of
  ///     the element above (the response handler's queue for the first interceptor; not the
  ///     main queue), so that a response reaches the handler with one thread hand-off, not
  ///     two: the responses it passes up are delivered in its block, within the handler's
  ///     queue. Its events then wait while a block of that queue runs: pass a queue of your own
  ///     for an interceptor whose events must not wait for the handler.
  ///   - executesInline: Run each event on the thread that delivers it, which may be the
  ///     caller's, the transport's or another interceptor's: only for an interceptor that never
  ///     blocks and does little (a counter, a header, a log record). Off by default, as L50
  ///     says each interceptor's events run on its own queue.
  public init(
    manager: GRPCInterceptorManager,
    dispatchQueue: DispatchQueue? = nil,
    executesInline: Bool = false
  ) {
    self.manager = manager
    let target = dispatchQueue == nil ? manager.defaultQueueTarget : nil
    self.dispatchQueue =
      dispatchQueue ?? DispatchQueue(label: "grpc-calls.interceptor", target: target)
    self.targetsElementAbove = target != nil
    self.executesInline = executesInline
  }

  // MARK: Requests: passed to the next interceptor

  /// The call starts; by default the next interceptor starts with the same options.
  open func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    self.manager.startNextInterceptor(requestOptions: requestOptions, callOptions: callOptions)
  }

  /// A request message; by default passed on.
  open func writeData(_ data: any Sendable) {
    self.manager.writeNextInterceptor(data)
  }

  /// The request side half-closes; by default passed on.
  open func finish() {
    self.manager.finishNextInterceptor()
  }

  /// The call is cancelled: by default the rest of the chain is cancelled, the call closes
  /// towards the application with `CANCELLED` (1) "Canceled", and the manager shuts down.
  open func cancel() {
    self.manager.cancelNextInterceptor()
    self.manager.forwardPreviousInterceptorClose(
      trailingMetadata: nil,
      error: GRPCError(code: .cancelled, message: "Canceled")
    )
    self.manager.shutDown()
  }

  /// Flow-control demand for `count` more messages; by default passed on.
  open func receiveNextMessages(_ count: Int) {
    self.manager.receiveNextInterceptorMessages(count)
  }

  // MARK: Responses: passed to the previous interceptor

  /// The response headers; by default passed on.
  open func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.manager.forwardPreviousInterceptor(initialMetadata: initialMetadata)
  }

  /// A response message; by default passed on.
  open func didReceiveData(_ data: any Sendable) {
    self.manager.forwardPreviousInterceptor(data: data)
  }

  /// The call closed below: by default the close is passed on and the manager shuts down.
  open func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.manager.forwardPreviousInterceptorClose(trailingMetadata: trailingMetadata, error: error)
    self.manager.shutDown()
  }

  /// A request message was accepted (flow control); by default passed on.
  open func didWriteData() {
    self.manager.forwardPreviousInterceptorDidWriteData()
  }
}

extension GRPCInterceptor: GRPCInterceptorInterface, GRPCResponseHandler {}
