public import Foundation
public import GRPCCalls
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

  public func accepts(response message: any Sendable) -> Bool {
    message is Response
  }

  public var responseDescription: String { Response.protoMessageName }
}
