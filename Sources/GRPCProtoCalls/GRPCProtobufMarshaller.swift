public import Foundation
public import GRPCCalls
public import GRPCCore
internal import GRPCProtobuf
public import SwiftProtobuf

/// Serializes `Request` messages and parses `Response` messages with SwiftProtobuf.
///
/// The proto calls set it as the call's `GRPCCallOptions/marshaller`, so
/// interceptors see typed messages and bytes exist only below them.
public struct GRPCProtobufMarshaller<
  Request: SwiftProtobuf.Message,
  Response: SwiftProtobuf.Message
>:
  GRPCMarshaller
{
  /// A request of another type than `Request` was written.
  public struct WrongMessageType: Error, CustomStringConvertible {
    public var description: String
  }

  public init() {}

  public func serialize(_ message: any Sendable) throws -> Data {
    guard let message = message as? Request else {
      throw WrongMessageType(
        description: "expected a \(Request.protoMessageName), got \(type(of: message))"
      )
    }
    return try message.serializedData()
  }

  public func deserialize(_ data: Data) throws -> any Sendable {
    try Response(serializedBytes: data)
  }

  /// Parses the bytes in place, with grpc-swift-protobuf's deserializer.
  ///
  /// - Throws: What swift-protobuf threw, as ``deserialize(_:)`` does.
  public func deserialize<Bytes: GRPCContiguousBytes>(
    contiguousBytes bytes: Bytes
  ) throws -> any Sendable {
    try ProtobufParsing.message(of: Response.self, from: bytes)
  }

  public func accepts(response message: any Sendable) -> Bool {
    message is Response
  }

  public var responseDescription: String { Response.protoMessageName }
}

/// Parses protobuf messages where the transport keeps their bytes, for the marshallers of every
/// face.
package enum ProtobufParsing {
  /// A `Message` from `bytes`, parsed in place with grpc-swift-protobuf's deserializer.
  ///
  /// - Throws: What swift-protobuf threw (the deserializer wraps it in an `RPCError`).
  package static func message<Message: SwiftProtobuf.Message, Bytes: GRPCContiguousBytes>(
    of type: Message.Type,
    from bytes: Bytes
  ) throws -> Message {
    do {
      return try ProtobufDeserializer<Message>().deserialize(bytes)
    } catch let error as RPCError {
      throw error.cause ?? error
    }
  }
}
