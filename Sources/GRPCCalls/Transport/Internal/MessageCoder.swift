internal import Foundation
internal import GRPCCore

/// Turns a call's messages into bytes and back: with the call's marshaller, or as raw bytes.
struct MessageCoder: Sendable {
  let marshaller: (any GRPCMarshaller)?
  /// The largest request message the method's service config allows; `nil`: no limit.
  var requestSizeLimit: Int? = nil

  /// The bytes of a request message.
  ///
  /// - Throws: `INTERNAL` naming what went wrong: the marshaller failed, or a raw call was
  ///   given something other than bytes; `RESOURCE_EXHAUSTED` for a message over
  ///   ``requestSizeLimit``.
  func serialize(_ message: any Sendable) throws(GRPCError) -> Data {
    let bytes = try self.bytes(of: message)
    if let limit = self.requestSizeLimit, bytes.count > limit {
      throw GRPCError(
        code: .resourceExhausted,
        message: "Sent message larger than max (\(bytes.count) vs. \(limit)): the service "
          + "config's maxRequestMessageBytes for this method is \(limit) bytes"
      )
    }
    return bytes
  }

  private func bytes(of message: any Sendable) throws(GRPCError) -> Data {
    guard let marshaller = self.marshaller else {
      return try RawMessage.bytes(of: message).get()
    }
    do {
      return try marshaller.serialize(message)
    } catch {
      throw GRPCError(
        code: .internalError,
        message: "Unable to serialize the request (\(type(of: message))): \(error)",
        cause: error
      )
    }
  }

  /// The message a response's bytes hold: the bytes themselves, as `Data`, without a
  /// marshaller.
  ///
  /// - Throws: `INTERNAL`, "Unable to parse response from the server", when the marshaller fails.
  func deserialize(_ bytes: ResponseBytes) throws(GRPCError) -> any Sendable {
    guard let marshaller = self.marshaller else { return bytes.data }
    do {
      switch bytes {
      case .transport(let bytes): return try marshaller.deserialize(contiguousBytes: bytes)
      case .data(let data): return try marshaller.deserialize(data)
      }
    } catch {
      throw GRPCError(
        code: .internalError,
        message: "Unable to parse response from the server",
        cause: error
      )
    }
  }
}
