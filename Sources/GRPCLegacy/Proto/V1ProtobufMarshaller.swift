internal import Foundation
internal import GRPCCalls
internal import GRPCCore
internal import SwiftProtobuf

/// The marshaller of a v1 proto call: its requests writer gives messages of any type (v1
/// writers are untyped), and its responses are parsed as the call's response class.
struct V1ProtobufMarshaller: GRPCMarshaller {
  let responseClass: any SwiftProtobuf.Message.Type

  func serialize(_ message: any Sendable) throws -> Data {
    guard let message = message as? any SwiftProtobuf.Message else {
      throw GRPCError(
        code: .internalError,
        message: "The requests writer produced a \(type(of: message)); a GRPCProtoCall sends protobuf messages"
      )
    }
    return try message.serializedData()
  }

  func deserialize(_ data: Data) throws -> any Sendable {
    try self.responseClass.init(serializedBytes: data)
  }

  /// The error for a response that is not of the response class (an interceptor passed on
  /// something else), or `nil` when it is.
  func mismatch(_ response: any Sendable) -> GRPCError? {
    guard ObjectIdentifier(type(of: response)) != ObjectIdentifier(self.responseClass) else { return nil }
    return GRPCError(
      code: .internalError,
      message: "Received a \(type(of: response)) as a response of a call whose responses are "
        + "\(self.responseClass.protoMessageName): an interceptor passed on a message of another type"
    )
  }
}
