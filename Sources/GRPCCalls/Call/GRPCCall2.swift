internal import Synchronization

/// A gRPC call you drive directly: start it, write messages, finish or cancel it.
///
/// Responses arrive on the handler's queue: initial metadata, then messages, then one close.
/// Every method is thread-safe and may be called from any thread. Requests are applied in the
/// order they are made; writes made before ``start()`` are sent after it. Misuse (starting twice,
/// writing after ``finish()``) does nothing. You need not keep the call alive: it runs to its
/// close on its own.
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

  private let dispatcher: ResponseDispatcher
  /// The top of the request path: the first interceptor's manager, or the transport.
  private let head: any RequestLink
  private let state = Mutex(StateMachine())

  /// Creates a call; nothing is sent until ``start()``.
  ///
  /// The first interceptor of ``GRPCCallOptions/interceptorFactories`` (then of the global
  /// ones) is made now; each next one when the one above it first passes a request on.
  ///
  /// - Parameters:
  ///   - requestOptions: The server and method.
  ///   - responseHandler: Receives the responses on its queue.
  ///   - callOptions: The call's options; defaults to ``GRPCCallOptions/init()``.
  ///   - channelPool: The pool to take the channel from; defaults to the shared pool.
  public init(
    requestOptions: GRPCRequestOptions,
    responseHandler: any GRPCResponseHandler,
    callOptions: GRPCCallOptions = GRPCCallOptions(),
    channelPool: GRPCChannelPool = .shared
  ) {
    self.requestOptions = requestOptions
    self.callOptions = callOptions
    self.dispatcher = ResponseDispatcher(handler: responseHandler)
    let (transportType, transport) = (callOptions.transportType, callOptions.transport)
    let chain = InterceptorChain(
      factories: ArraySlice(callOptions.interceptorFactories + Self.globalInterceptors),
      transport: { previous in
        GRPCCall2Internal(
          pool: channelPool,
          transportType: transportType,
          transport: transport,
          previous: previous
        )
      }
    )
    self.head = chain.makeHead(previous: self.dispatcher)
  }

  /// Starts the call: passes it through the interceptors, then fetches the auth token if any,
  /// takes a channel and opens the stream.
  ///
  /// Calling it again does nothing.
  public func start() {
    self.perform(self.state.withLock { $0.start() })
  }

  /// Sends a request message: `Data` (or `[UInt8]`) for raw calls, a typed message when the
  /// options carry a ``GRPCCallOptions/marshaller``.
  ///
  /// Before ``start()`` the message is buffered; after ``finish()`` or ``cancel()`` it is dropped.
  public func writeData(_ data: any Sendable) {
    self.perform(self.state.withLock { $0.write(data) })
  }

  /// Half-closes the call: no more request messages. Responses keep arriving.
  public func finish() {
    self.perform(self.state.withLock { $0.finish() })
  }

  /// Asks for `count` more response messages, when flow control is enabled.
  ///
  /// Demand accumulates and may be given before ``start()``. `count` ≤ 0 does nothing, and so
  /// does every call when ``GRPCCallOptions/enableFlowControl`` is off.
  public func receiveNextMessages(_ count: Int) {
    guard self.callOptions.enableFlowControl, count > 0 else { return }
    self.head.receiveNextMessages(count)
  }

  /// Cancels the call.
  ///
  /// Unless the call had already closed, it closes with `CANCELLED` (1), "Canceled by app", and
  /// nil trailers; responses not yet delivered are dropped. After close it does nothing.
  public func cancel() {
    self.perform(self.state.withLock { $0.cancel() })
  }

  /// Carries out what the state machine decided, after its lock is released.
  private func perform(_ action: StateMachine.Action) {
    switch action {
    case .none:
      return
    case .startRPC(let writes, let finish):
      self.head.start(requestOptions: self.requestOptions, callOptions: self.callOptions)
      for message in writes {
        self.head.write(message)
      }
      if finish {
        self.head.finish()
      }
    case .write(let message):
      self.head.write(message)
    case .finish:
      self.head.finish()
    case .cancel:
      // Close first so that nothing the chain still delivers can come before the cancel close.
      // The chain is cancelled even when the call never started, so its interceptors end.
      self.dispatcher.cancelByApp()
      self.head.cancel()
    }
  }
}
