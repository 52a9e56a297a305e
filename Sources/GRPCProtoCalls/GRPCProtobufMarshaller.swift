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
  /// - Throws: What swift-protobuf threw.
  public func deserialize<Bytes: GRPCContiguousBytes>(
    contiguousBytes bytes: Bytes
  ) throws -> any Sendable {
    do {
      return try ProtobufDeserializer<Response>().deserialize(bytes)
    } catch let error as RPCError {
      // It wraps swift-protobuf's error: give that, as `deserialize(_:)` does.
      throw error.cause ?? error
    }
  }

  public func accepts(response message: any Sendable) -> Bool {
    message is Response
  }

  public var responseDescription: String { Response.protoMessageName }
}
