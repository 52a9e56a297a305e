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
///
/// While the TCP connect is still pending the handler leaves it to the socket's own connect
/// timeout (set to the same limit), whose error names the limit too; closing the channel then
/// would fail the connect with an error that says nothing of why. If the connect completes
/// after the limit, the handler closes the connection as soon as it is active.
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
  /// The limit passed before the TCP connect completed.
  private var expiredBeforeActive = false

  init(limit: TimeAmount) {
    self.limit = limit
  }

  func handlerAdded(context: ChannelHandlerContext) {
    let bound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
    self.timer = context.eventLoop.scheduleTask(in: self.limit) {
      let (handler, context) = bound.value
      handler.timer = nil
      if context.channel.isActive {
        handler.expire(context: context)
      } else {
        handler.expiredBeforeActive = true
      }
    }
  }

  private func expire(context: ChannelHandlerContext) {
    context.fireErrorCaught(Expired(limit: self.limit))
    context.close(promise: nil)
  }

  func channelActive(context: ChannelHandlerContext) {
    context.fireChannelActive()
    if self.expiredBeforeActive {
      self.expiredBeforeActive = false
      self.expire(context: context)
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
