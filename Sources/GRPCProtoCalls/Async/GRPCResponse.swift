public import GRPCCore
public import SwiftProtobuf

/// The response of a unary call with the metadata around it.
public struct GRPCResponse<Message: SwiftProtobuf.Message>: Sendable {
  /// The response headers (initial metadata).
  public var metadata: Metadata

  /// The response message.
  public var message: Message

  /// The trailers the server closed the call with.
  public var trailers: Metadata

  /// Creates a response.
  public init(metadata: Metadata, message: Message, trailers: Metadata) {
    self.metadata = metadata
    self.message = message
    self.trailers = trailers
  }
}
