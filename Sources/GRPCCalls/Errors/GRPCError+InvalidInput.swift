internal import GRPCCallsInput
internal import GRPCCore

extension GRPCError {
  /// `INVALID_ARGUMENT` with the refusal's message: a host, path, metadata entry or channel
  /// argument the app gave that cannot work.
  init(_ invalid: InvalidInput) {
    self.init(code: .invalidArgument, message: invalid.message)
  }
}
