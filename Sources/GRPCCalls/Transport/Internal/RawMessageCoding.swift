package import Foundation
package import GRPCCore

/// Passes request bytes to the core unchanged.
///
/// `package`: the bench's grpc-swift-2 client uses the same coders, so that every bench client
/// pays for the same (no) serialization work.
package struct RawSerializer: MessageSerializer {
  package init() {}

  package func serialize<Bytes: GRPCContiguousBytes>(_ message: Data) throws -> Bytes {
    Bytes(message)
  }
}

/// Passes response bytes from the core unchanged, as `Data`.
package struct RawDeserializer: MessageDeserializer {
  package init() {}

  package func deserialize<Bytes: GRPCContiguousBytes>(
    _ serializedMessageBytes: Bytes
  ) throws -> Data {
    serializedMessageBytes.withUnsafeBytes { Data($0) }
  }
}

enum RawMessage {
  /// The bytes of a message written to a raw call, or an error naming what was given instead.
  static func bytes(of message: any Sendable) -> Result<Data, GRPCError> {
    switch message {
    case let data as Data:
      return .success(data)
    case let bytes as [UInt8]:
      return .success(Data(bytes))
    default:
      return .failure(
        GRPCError(
          code: .internalError,
          message:
            "writeData(_:) was given a \(type(of: message)); a raw call sends Data or [UInt8]"
        )
      )
    }
  }
}
