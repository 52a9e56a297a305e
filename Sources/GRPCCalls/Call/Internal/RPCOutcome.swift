internal import GRPCCore

/// How an RPC ended: the trailers the server sent (`nil` when it ended on this side) and the
/// error, if it failed.
struct RPCOutcome: Sendable {
  var trailers: Metadata?
  var error: GRPCError?
}
