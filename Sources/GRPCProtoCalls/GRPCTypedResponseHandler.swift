public import Dispatch
public import GRPCCalls
public import GRPCCore
public import SwiftProtobuf

/// Receives the responses of a proto call as its response type: the typed form of
/// ``GRPCProtoResponseHandler``, which generated methods take, so that a handler for another
/// message type is a compile error.
///
/// The order and guarantees are those of `GRPCResponseHandler`: initial metadata,
/// then messages, then exactly one close, all on ``dispatchQueue``. Every callback but
/// ``didReceiveMessage(_:)`` has a default that does nothing. For closures instead of a type,
/// use ``GRPCResponseCallbacks``.
public protocol GRPCTypedResponseHandler<Response>: Sendable {
  /// The method's response message.
  associatedtype Response: SwiftProtobuf.Message

  /// The queue the callbacks run on.
  var dispatchQueue: DispatchQueue { get }

  /// The response headers arrived.
  func didReceiveInitialMetadata(_ initialMetadata: Metadata)

  /// A response message arrived.
  func didReceiveMessage(_ message: Response)

  /// The call closed; `error` is `nil` on success. A response that did not parse closes the
  /// call with `INTERNAL` (13), "Unable to parse response from the server".
  func didClose(trailingMetadata: Metadata?, error: GRPCError?)

  /// A written message was accepted by the transport (flow control only).
  func didWriteMessage()
}

extension GRPCTypedResponseHandler {
  public func didReceiveInitialMetadata(_ initialMetadata: Metadata) {}
  public func didClose(trailingMetadata: Metadata?, error: GRPCError?) {}
  public func didWriteMessage() {}
}

/// A typed response handler made of closures.
///
/// ```swift
/// let call = client.listFeatures(
///   message: rectangle,
///   responseHandler: GRPCResponseCallbacks(queue: queue) { feature in
///     print(feature.name)
///   } onClose: { _, error in
///     print(error?.message ?? "done")
///   }
/// )
/// call.start()
/// ```
public struct GRPCResponseCallbacks<Response: SwiftProtobuf.Message>: GRPCTypedResponseHandler {
  public let dispatchQueue: DispatchQueue
  private let onInitialMetadata: @Sendable (Metadata) -> Void
  private let onMessage: @Sendable (Response) -> Void
  private let onClose: @Sendable (Metadata?, GRPCError?) -> Void
  private let onWrite: @Sendable () -> Void

  /// Creates a handler.
  ///
  /// - Parameters:
  ///   - queue: The queue every closure runs on.
  ///   - onInitialMetadata: The response headers.
  ///   - onMessage: Each response message.
  ///   - onWrite: A written message was accepted (flow control only).
  ///   - onClose: The close: trailers (if the server sent them) and the error, `nil` on success.
  public init(
    queue: DispatchQueue,
    onInitialMetadata: @escaping @Sendable (Metadata) -> Void = { _ in },
    onMessage: @escaping @Sendable (Response) -> Void,
    onWrite: @escaping @Sendable () -> Void = {},
    onClose: @escaping @Sendable (Metadata?, GRPCError?) -> Void
  ) {
    self.dispatchQueue = queue
    self.onInitialMetadata = onInitialMetadata
    self.onMessage = onMessage
    self.onWrite = onWrite
    self.onClose = onClose
  }

  public func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.onInitialMetadata(initialMetadata)
  }

  public func didReceiveMessage(_ message: Response) {
    self.onMessage(message)
  }

  public func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.onClose(trailingMetadata, error)
  }

  public func didWriteMessage() {
    self.onWrite()
  }
}

/// Passes a raw call's callbacks to a typed handler; the messages are already parsed by the
/// call's marshaller.
struct TypedHandlerAdapter<Handler: GRPCTypedResponseHandler>: GRPCResponseHandler {
  let handler: Handler

  var dispatchQueue: DispatchQueue { self.handler.dispatchQueue }

  func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.handler.didReceiveInitialMetadata(initialMetadata)
  }

  func didReceiveData(_ data: any Sendable) {
    // The marshaller parsed it; an interceptor that put something else here broke the call's
    // types, and the message is not the handler's to see.
    guard let message = data as? Handler.Response else { return }
    self.handler.didReceiveMessage(message)
  }

  func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.handler.didClose(trailingMetadata: trailingMetadata, error: error)
  }

  func didWriteData() {
    self.handler.didWriteMessage()
  }
}
