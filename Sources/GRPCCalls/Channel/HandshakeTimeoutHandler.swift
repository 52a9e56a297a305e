internal import NIOCore

/// Fails a connection attempt that has not heard from the server within the connect timeout
/// (``GRPCCallOptions/connectMinTimeout``).
///
/// The transport has no connect-timeout setting: it always uses SwiftNIO's 10 s for the TCP
/// connect and nothing for the handshakes after it. This handler goes first in each new
/// connection's pipeline, before the socket connects, and closes the connection unless the
/// server has sent a byte (its TLS ServerHello, or its HTTP/2 SETTINGS in plaintext) within
/// the limit: a TCP connect that hangs and a server that accepts but never answers both end
/// then. Once the server has spoken, it steps aside.
final class HandshakeTimeoutHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = NIOAny
  typealias InboundOut = NIOAny

  /// Why the connection was closed; the transport keeps it as the failed attempt's cause.
  struct Expired: Error, CustomStringConvertible {
    var limit: TimeAmount

    var description: String {
      "The server did not complete the connection within \(Double(self.limit.nanoseconds) / 1e9) s (connectMinTimeout)"
    }
  }

  private let limit: TimeAmount
  private var timer: Scheduled<Void>?

  init(limit: TimeAmount) {
    self.limit = limit
  }

  func handlerAdded(context: ChannelHandlerContext) {
    let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
    self.timer = context.eventLoop.scheduleTask(in: self.limit) {
      let (handler, context) = bound.value
      handler.timer = nil
      context.fireErrorCaught(Expired(limit: handler.limit))
      context.close(promise: nil)
    }
  }

  func handlerRemoved(context: ChannelHandlerContext) {
    self.timer?.cancel()
    self.timer = nil
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    self.timer?.cancel()
    self.timer = nil
    context.fireChannelRead(data)
    context.pipeline.syncOperations.removeHandler(self, promise: nil)
  }

  func channelInactive(context: ChannelHandlerContext) {
    self.timer?.cancel()
    self.timer = nil
    context.fireChannelInactive()
  }
}
