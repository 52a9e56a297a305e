internal import Foundation
internal import GRPCCore

/// Recognizes the core's report of a response message larger than the limit.
///
/// The HTTP/2 transport checks each message's length prefix against its limit before buffering
/// it and fails the stream with "... maximum payload size (max: N, actual: M)". Depending on
/// where in the stream that happens, the RPC surfaces it as `RESOURCE_EXHAUSTED` or wrapped in
/// another error (Design article, "Where the core needed help"). Either way the call reports `RESOURCE_EXHAUSTED` naming both
/// sizes, the way gRPC core does.
///
/// A compressed message is limited by its decompressed size: the transport stops inflating at
/// the limit and reports "Message is too large to decompress" as `INTERNAL`, without the size.
struct OversizeResponse {
  var limit: Int
  /// The message's size; `nil` when it was compressed and inflating stopped at the limit.
  var actual: Int?

  init?(_ error: RPCError, limit: Int) {
    let failures = CoreFailure.all(in: error)
    for case .messageTooLarge(let limit, let actual) in failures {
      self.limit = limit
      self.actual = actual
      return
    }
    guard failures.contains(.messageTooLargeToDecompress) else { return nil }
    self.limit = limit
    self.actual = nil
  }

  /// gRPC core's message, word for word: "Received message larger than max (N vs. M)".
  var message: String {
    guard let actual = self.actual else {
      return
        "Received message larger than max (over \(self.limit) once decompressed vs. \(self.limit))"
    }
    return "Received message larger than max (\(actual) vs. \(self.limit))"
  }

  /// What to do about it, for the error's debug message.
  var explanation: String {
    let size =
      self.actual.map { "response of \($0) bytes" } ?? "compressed response, once decompressed,"
    return "The \(size) exceeds the response size limit of \(self.limit) bytes: raise "
      + "GRPCCallOptions.responseSizeLimit (or the host's setResponseSizeLimit), or the service "
      + "config's maxResponseMessageBytes for the method if it sets one, if such responses are expected"
  }
}
