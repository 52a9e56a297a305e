internal import Foundation
internal import GRPCCalls
internal import GRPCCore
internal import GRPCProtoCalls
internal import SwiftProtobuf

/// The marshaller of a v1 proto call: its requests writer gives messages of any type (v1
/// writers are untyped), and its responses are parsed as the call's response class.
struct V1ProtobufMarshaller: GRPCMarshaller {
  let responseClass: any SwiftProtobuf.Message.Type

  func serialize(_ message: any Sendable) throws -> Data {
    guard let message = message as? any SwiftProtobuf.Message else {
      throw GRPCError(
        code: .internalError,
        message:
          "The requests writer produced a \(type(of: message)); a GRPCProtoCall sends protobuf messages"
      )
    }
    return try message.serializedData()
  }

  func deserialize(_ data: Data) throws -> any Sendable {
    try self.responseClass.init(serializedBytes: data)
  }

  func deserialize<Bytes: GRPCContiguousBytes>(contiguousBytes bytes: Bytes) throws -> any Sendable
  {
    try ProtobufParsing.message(of: self.responseClass, from: bytes)
  }

  func accepts(response message: any Sendable) -> Bool {
    ObjectIdentifier(type(of: message)) == ObjectIdentifier(self.responseClass)
  }

  var responseDescription: String { self.responseClass.protoMessageName }
}
