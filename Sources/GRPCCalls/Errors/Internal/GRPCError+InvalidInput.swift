internal import GRPCCallsInput
internal import GRPCCore

extension GRPCError {
  /// `INVALID_ARGUMENT` with the refusal's message: a host, path, metadata entry or channel
  /// argument the app gave that cannot work.
  init(_ invalid: InvalidInput) {
    self.init(code: .invalidArgument, message: invalid.message)
  }

  /// Runs one of `GRPCCallsInput`'s checks and turns its refusal into the `GRPCError` the app
  /// sees, so every check maps the same way.
  static func checkingInput<Value>(
    _ check: () throws(InvalidInput) -> Value
  ) throws(GRPCError) -> Value {
    do {
      return try check()
    } catch {
      throw GRPCError(error)
    }
  }
}
