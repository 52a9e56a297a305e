internal import Dispatch
internal import GRPCCore

/// One element of a call's request path, as the element above it sees it: an interceptor's
/// manager, or the transport at the bottom of the chain.
///
/// Every method is thread-safe and returns at once; the element runs the event in its own
/// context. Events sent from one thread are applied in the order they were sent.
protocol RequestLink: AnyObject, Sendable {
  /// Starts the call; `writes` and `finish` were made before the start and travel with it, so
  /// the element can see every request of a call that half-closed before it started.
  func start(
    requestOptions: GRPCRequestOptions,
    callOptions: GRPCCallOptions,
    writes: [any Sendable],
    finish: Bool
  )
  func write(_ message: any Sendable)
  func finish()
  func cancel()
  func receiveNextMessages(_ count: Int)
}

/// A response on its way up a call's chain.
enum CallResponse: Sendable {
  case initialMetadata(Metadata)
  case message(any Sendable)
  case didWrite
  case close(trailers: Metadata?, error: GRPCError?)
}

/// One element of a call's response path, as the element below it sees it: an interceptor's
/// manager, or the call's dispatcher at the top of the chain.
///
/// Every method is thread-safe and returns at once; the element delivers the event on its own
/// queue, in the order the events were sent.
protocol ResponseLink: AnyObject, Sendable {
  /// The queue this element's responses run on, if any: an interceptor's default queue below
  /// targets it (see ``GRPCInterceptorManager/defaultQueueTarget``).
  var deliveryQueue: DispatchQueue? { get }

  /// Takes `response`. `withinDeliveryQueue`: the sender passes it from a block that runs within
  /// ``deliveryQueue`` (a block of a queue that targets it), so the element may deliver it there
  /// and then, when nothing of its own is waiting, instead of scheduling a block.
  func receive(_ response: CallResponse, withinDeliveryQueue: Bool)

  /// Offers the rest of a flooding response stream to the handler, to read in its own task
  /// (``ResponsePull``); `false` (the default) when it stays with the call's task. Only the
  /// call itself takes it, and only for a handler that reads in its own task: an interceptor
  /// sees each response where the chain runs it.
  func offer(_ pull: ResponsePull) -> Bool

  /// Takes a message the handler's own task read from a stream handed to it (``ResponsePull``):
  /// `true` when that task takes the message itself, delivered; `false` when it comes through
  /// the handler's callbacks (or is dropped: the call closed). Only the element that took the
  /// stream (``offer(_:)``) is given such messages.
  func receivePulled(_ message: any Sendable) -> Bool
}

extension ResponseLink {
  func offer(_ pull: ResponsePull) -> Bool {
    false
  }

  func receivePulled(_ message: any Sendable) -> Bool {
    self.receive(.message(message), withinDeliveryQueue: false)
    return false
  }

  func initialMetadata(_ metadata: Metadata) {
    self.receive(.initialMetadata(metadata), withinDeliveryQueue: false)
  }

  func message(_ message: any Sendable) {
    self.receive(.message(message), withinDeliveryQueue: false)
  }

  func didWrite() {
    self.receive(.didWrite, withinDeliveryQueue: false)
  }

  func close(trailers: Metadata?, error: GRPCError?) {
    self.receive(.close(trailers: trailers, error: error), withinDeliveryQueue: false)
  }
}
