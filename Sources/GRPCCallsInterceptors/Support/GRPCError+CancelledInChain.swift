internal import GRPCCalls
internal import GRPCCore

extension GRPCError {
  /// The close `GRPCInterceptor.cancel()` passes upstream; observers record it as the call's end.
  static var cancelledInChain: GRPCError {
    GRPCError(code: .cancelled, message: "Canceled")
  }
}
