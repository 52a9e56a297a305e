internal import Foundation
internal import GRPCCalls
internal import SwiftProtobuf

/// The message a request's bytes hold, for the bench clients that make typed calls.
///
/// The bench hands every client serialized requests; an app that makes typed calls holds its
/// messages already, so a typed client parses each request once (the bench repeats one request
/// per scenario) instead of at every call, which would count the bench's parse against the face.
/// The call still serializes the message each time, as it must.
final class ParsedRequests<Message: SwiftProtobuf.Message>: Sendable {
  private let last = LockedValue<(bytes: Data, message: Message)?>(nil)

  /// The message `bytes` hold.
  func message(of bytes: Data) throws -> Message {
    if let last = self.last.withLock({ $0 }), last.bytes == bytes {
      return last.message
    }
    let message = try Message(serializedBytes: bytes)
    self.last.withLock { $0 = (bytes, message) }
    return message
  }
}
