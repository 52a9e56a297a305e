internal import GRPCCalls
internal import SwiftProtobuf
internal import Synchronization

/// A call that sends one request message: unary, or server streaming (L38).
///
/// ``start()`` starts the call, asks for one response message (so it works with flow
/// control), writes the request and half-closes. ``cancel()`` works at any time. Calls are
/// made by ``GRPCProtoService/unaryCall(method:message:responseHandler:callOptions:responseClass:safety:)``.
public final class GRPCUnaryProtoCall: Sendable {
  private let call: GRPCCall2
  private let message: any SwiftProtobuf.Message
  private let started = Atomic(false)

  init(call: GRPCCall2, message: any SwiftProtobuf.Message) {
    self.call = call
    self.message = message
  }

  /// Starts the call. Calling it again does nothing.
  public func start() {
    guard !self.started.exchange(true, ordering: .relaxed) else {
      self.call.start()  // logs the misuse
      return
    }
    // The request, its end and the demand travel with the start, so the message and
    // END_STREAM leave in one flush.
    self.call.receiveNextMessages(1)
    self.call.writeData(self.message)
    self.call.finish()
    self.call.start()
  }

  /// Asks for `count` more messages of a server-streaming method, when flow control is on.
  public func receiveNextMessages(_ count: Int) {
    self.call.receiveNextMessages(count)
  }

  /// Cancels the call: it closes with `CANCELLED` (1) "Canceled by app" unless it had closed.
  public func cancel() {
    self.call.cancel()
  }
}
