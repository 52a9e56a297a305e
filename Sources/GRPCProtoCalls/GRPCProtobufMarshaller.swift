public import Foundation
public import GRPCCalls
public import GRPCCore
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

  /// Parses the bytes in place, handing them to swift-protobuf directly.
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
  /// A `Message` from `bytes`, parsed in place.
  ///
  /// The marshallers run unspecialized (behind ``GRPCMarshaller``), so each generic wrapper on
  /// the way to swift-protobuf (grpc-swift-protobuf's deserializer and its bytes adapter) would
  /// cost a metadata lookup per message: the bytes go to swift-protobuf as ``BorrowedBytes``.
  ///
  /// - Throws: What swift-protobuf threw.
  package static func message<Message: SwiftProtobuf.Message, Bytes: GRPCContiguousBytes>(
    of type: Message.Type,
    from bytes: Bytes
  ) throws -> Message {
    try bytes.withUnsafeBytes { try Message(serializedBytes: BorrowedBytes($0)) }
  }
}

/// Bytes lent to swift-protobuf for one parse, which reads them in place.
///
/// Parsing only reads them; the initializers and the mutable view the protocol also asks for
/// work on a copy of their own.
private struct BorrowedBytes: SwiftProtobufContiguousBytes {
  private enum Storage {
    case borrowed(UnsafeRawBufferPointer)
    case owned([UInt8])
  }

  private var storage: Storage

  init(_ bytes: UnsafeRawBufferPointer) {
    self.storage = .borrowed(bytes)
  }

  init(repeating byte: UInt8, count: Int) {
    self.storage = .owned(Array(repeating: byte, count: count))
  }

  init<S: Sequence>(_ sequence: S) where S.Element == UInt8 {
    self.storage = .owned(Array(sequence))
  }

  var count: Int {
    switch self.storage {
    case .borrowed(let bytes): bytes.count
    case .owned(let bytes): bytes.count
    }
  }

  func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    switch self.storage {
    case .borrowed(let bytes): try body(bytes)
    case .owned(let bytes): try bytes.withUnsafeBytes(body)
    }
  }

  mutating func withUnsafeMutableBytes<R>(
    _ body: (UnsafeMutableRawBufferPointer) throws -> R
  ) rethrows -> R {
    var bytes: [UInt8]
    switch self.storage {
    case .borrowed(let borrowed): bytes = Array(borrowed)
    case .owned(let owned): bytes = owned
    }
    self.storage = .owned([])
    defer { self.storage = .owned(bytes) }
    return try bytes.withUnsafeMutableBytes(body)
  }
}
