internal import Dispatch
internal import GRPCCore
internal import Synchronization

/// The top of a call's chain: delivers its responses to the handler, on the handler's queue, in
/// order, close once.
///
/// Events are queued on a serial queue that targets the handler's queue, so they run on the
/// handler's queue one at a time and in the order they were submitted, even when that queue is
/// concurrent. Whether an event is still wanted is decided when it *runs*, not when it is
/// submitted (see ``DeliveryState``): that is what makes "nothing after close" and "cancel drops
/// what is still queued" hold without ever calling user code under a lock.
final class ResponseDispatcher: ResponseLink {
  private let handler: any GRPCResponseHandler
  private let queue: DispatchQueue
  private let state = Mutex(DeliveryState())

  init(handler: any GRPCResponseHandler) {
    self.handler = handler
    self.queue = DispatchQueue(label: "grpc-calls.call-responses", target: handler.dispatchQueue)
  }

  func initialMetadata(_ metadata: Metadata) {
    self.queue.async {
      guard self.state.withLock({ $0.shouldDeliverEvent() }) else { return }
      self.handler.didReceiveInitialMetadata(metadata)
    }
  }

  func message(_ message: any Sendable) {
    self.queue.async {
      guard self.state.withLock({ $0.shouldDeliverEvent() }) else { return }
      self.handler.didReceiveData(message)
    }
  }

  func didWrite() {
    self.queue.async {
      guard self.state.withLock({ $0.shouldDeliverEvent() }) else { return }
      self.handler.didWriteData()
    }
  }

  /// Closes the call with what the RPC ended with; dropped if the call already closed.
  func close(trailers: Metadata?, error: GRPCError?) {
    self.queue.async {
      guard self.state.withLock({ $0.shouldDeliverClose() }) else { return }
      self.handler.didClose(trailingMetadata: trailers, error: error)
    }
  }

  /// Closes the call because the application cancelled it.
  ///
  /// From the moment this returns, events still queued are dropped: the only callback that can
  /// follow is this close, and only if the call had not closed already.
  func cancelByApp() {
    self.state.withLock { $0.cancel() }
    self.queue.async {
      guard self.state.withLock({ $0.shouldDeliverCancelClose() }) else { return }
      self.handler.didClose(trailingMetadata: nil, error: .canceledByApp)
    }
  }
}
