internal import GRPCCalls
public import SwiftProtobuf

/// A call whose requests stream: client or bidirectional streaming (L38).
///
/// Write messages with ``writeMessage(_:)`` and end the requests with ``finish()``. The call is
/// generic over the method's messages, so writing another type does not compile. Unlike
/// gRPC Objective-C's implementation, ``cancel()`` and ``receiveNextMessages(_:)`` still reach
/// the RPC after ``finish()``: the responses may go on for long after the requests end.
public final class GRPCStreamingProtoCall<
  Request: SwiftProtobuf.Message,
  Response: SwiftProtobuf.Message
>: Sendable {
  private let call: GRPCCall2

  init(call: GRPCCall2) {
    self.call = call
  }

  /// Starts the call. Calling it again does nothing.
  public func start() {
    self.call.start()
  }

  /// Sends a request message. Before ``start()`` it is buffered; after ``finish()`` it is
  /// dropped.
  public func writeMessage(_ message: Request) {
    self.call.writeData(message)
  }

  /// No more requests; responses keep arriving.
  public func finish() {
    self.call.finish()
  }

  /// Asks for `count` more response messages, when flow control is on.
  public func receiveNextMessages(_ count: Int) {
    self.call.receiveNextMessages(count)
  }

  /// Cancels the call: it closes with `CANCELLED` (1) "Canceled by app" unless it had closed.
  public func cancel() {
    self.call.cancel()
  }
}
