public import Dispatch
public import GRPCCalls
public import GRPCCore
public import SwiftProtobuf

/// Receives the responses of a proto call on a queue of its choosing.
///
/// The order and guarantees are those of `GRPCResponseHandler`: initial metadata,
/// then messages, then exactly one close, all on ``dispatchQueue``. Every callback has a default
/// that does nothing.
public protocol GRPCProtoResponseHandler: Sendable {
  /// The queue the callbacks run on.
  var dispatchQueue: DispatchQueue { get }

  /// The response headers arrived.
  func didReceiveInitialMetadata(_ initialMetadata: Metadata)

  /// A response message arrived, parsed as the call's response type.
  func didReceiveProtoMessage(_ message: any SwiftProtobuf.Message)

  /// The call closed; `error` is `nil` on success. A response that did not parse closes the
  /// call with `INTERNAL` (13), "Unable to parse response from the server".
  func didClose(trailingMetadata: Metadata?, error: GRPCError?)

  /// A written message was accepted by the transport (flow control only).
  func didWriteMessage()
}

extension GRPCProtoResponseHandler {
  public func didReceiveInitialMetadata(_ initialMetadata: Metadata) {}
  public func didReceiveProtoMessage(_ message: any SwiftProtobuf.Message) {}
  public func didClose(trailingMetadata: Metadata?, error: GRPCError?) {}
  public func didWriteMessage() {}
}

/// Passes a raw call's callbacks to a proto handler; the messages are already parsed by the
/// call's marshaller.
struct ProtoHandlerAdapter: GRPCResponseHandler {
  let handler: any GRPCProtoResponseHandler

  var dispatchQueue: DispatchQueue { self.handler.dispatchQueue }

  func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.handler.didReceiveInitialMetadata(initialMetadata)
  }

  func didReceiveData(_ data: any Sendable) {
    // The marshaller parsed it; an interceptor that put something else here broke the call's
    // types, and the message is not the handler's to see.
    guard let message = data as? any SwiftProtobuf.Message else { return }
    self.handler.didReceiveProtoMessage(message)
  }

  func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.handler.didClose(trailingMetadata: trailingMetadata, error: error)
  }

  func didWriteData() {
    self.handler.didWriteMessage()
  }
}
