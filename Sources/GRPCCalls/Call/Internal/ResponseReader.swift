internal import Foundation
internal import GRPCCore

/// Reads the `GRPCClient` path's response stream up the runner's chain: headers, then each
/// message.
///
/// It never throws: a failure after the headers becomes a ``GRPCError`` carrying those headers,
/// so the error a failed call closes with holds what the handler was given.
struct ResponseReader {
  let runner: GRPCCall2Internal
  /// Deserializes each message before it travels up; a failure ends the call.
  let coder: MessageCoder
  let responseSizeLimit: Int

  func read(_ response: StreamingClientResponse<Data>) async -> RPCOutcome {
    let contents: StreamingClientResponse<Data>.Contents
    switch response.accepted {
    case .success(let accepted):
      contents = accepted
    case .failure(let rejected):
      // Trailers-only: the server answered with a status and no headers.
      return self.failure(RetryInfoPushback.removed(from: rejected), headers: [:])
    }

    self.runner.deliver(initialMetadata: contents.metadata)
    let flowControlled = self.runner.isFlowControlled
    var trailers: Metadata = [:]
    do {
      for try await part in contents.bodyParts {
        switch part {
        case .message(let message):
          // With flow control, each message waits for a unit of demand; the reader pulls the
          // next part only after that, so at most one message waits in this layer.
          if flowControlled, await self.runner.takeDemand() == .cancelled {
            throw CancellationError()
          }
          // Returning early (a parse failure) ends the RPC, which cancels it on the server.
          self.runner.deliver(message: try self.coder.deserialize(message))
        case .trailingMetadata(let metadata):
          trailers = metadata
        }
      }
    } catch {
      return self.failure(error, headers: contents.metadata)
    }
    return RPCOutcome(trailers: trailers, error: nil)
  }

  private func failure(_ error: any Error, headers: Metadata) -> RPCOutcome {
    let converted = self.runner.convert(error, headers: headers, limit: self.responseSizeLimit)
    return RPCOutcome(trailers: GRPCError.serverTrailers(in: error), error: converted)
  }
}
