internal import GRPCCore

/// What one attempt of an RPC needs, on either path to the core.
struct RPCAttempt: Sendable {
  var channel: any ChannelClient
  var descriptor: MethodDescriptor
  var options: CallOptions
  var metadata: Metadata
  /// Every request, when the request side had half-closed before the stream opened.
  var known: [any Sendable]?
  var coder: MessageCoder
  var responseSizeLimit: Int
  /// The executor of the channel's event loop, where `GRPCClient` attempts run; `nil` for a
  /// registered transport.
  var loopExecutor: EventLoopTaskExecutor? = nil
}
