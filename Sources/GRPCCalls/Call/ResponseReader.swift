internal import Foundation
internal import GRPCCore

/// Reads the core's response stream up the call's chain: headers, then each message.
///
/// It never throws: a failure after the headers becomes a ``GRPCError`` carrying those headers,
/// so the error a failed call closes with holds what the handler was given.
struct ResponseReader {
  struct Outcome: Sendable {
    var trailers: Metadata?
    var error: GRPCError?
  }

  let previous: any ResponseLink
  /// With flow control, each message waits for a unit of demand before it is delivered; the
  /// reader pulls the next part only after that, so at most one message waits in this layer.
  let demand: MessageDemand?
  /// Deserializes each message before it travels up; a failure ends the call.
  let coder: MessageCoder
  let responseSizeLimit: Int

  func read(_ response: StreamingClientResponse<Data>) async -> Outcome {
    let contents: StreamingClientResponse<Data>.Contents
    switch response.accepted {
    case .success(let accepted):
      contents = accepted
    case .failure(let rejected):
      // Trailers-only: the server answered with a status and no headers.
      return self.failure(rejected, headers: [:])
    }

    self.previous.initialMetadata(contents.metadata)
    var trailers: Metadata = [:]
    do {
      for try await part in contents.bodyParts {
        switch part {
        case .message(let message):
          try await self.demand?.take()
          // Returning early (a parse failure) ends the RPC, which cancels it on the server.
          self.previous.message(try self.coder.deserialize(message))
        case .trailingMetadata(let metadata):
          trailers = metadata
        }
      }
    } catch {
      return self.failure(error, headers: contents.metadata)
    }
    return Outcome(trailers: trailers, error: nil)
  }

  private func failure(_ error: any Error, headers: Metadata) -> Outcome {
    let converted = GRPCError(
      converting: error,
      headers: headers,
      responseSizeLimit: self.responseSizeLimit
    )
    return Outcome(trailers: converted.trailers, error: converted)
  }
}
