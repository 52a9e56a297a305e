package import GRPCCore

/// How an RPC ended: the trailers the server sent (`nil` when it ended on this side) and the
/// error, if it failed.
package struct RPCOutcome: Sendable {
  package var trailers: Metadata?
  package var error: GRPCError?

  package init(trailers: Metadata?, error: GRPCError?) {
    self.trailers = trailers
    self.error = error
  }
}
