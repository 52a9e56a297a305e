internal import Foundation
internal import GRPCCore

/// Turns a call's messages into bytes and back: with the call's marshaller, or as raw bytes.
struct MessageCoder: Sendable {
  let marshaller: (any GRPCMarshaller)?

  /// The bytes of a request message.
  ///
  /// - Throws: `INTERNAL` naming what went wrong: the marshaller failed, or a raw call was
  ///   given something other than bytes.
  func serialize(_ message: any Sendable) throws(GRPCError) -> Data {
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

  /// The message a response's bytes hold: the bytes themselves without a marshaller.
  ///
  /// - Throws: `INTERNAL`, "Unable to parse response from the server", when the marshaller fails.
  func deserialize(_ data: Data) throws(GRPCError) -> any Sendable {
    guard let marshaller = self.marshaller else { return data }
    do {
      return try marshaller.deserialize(data)
    } catch {
      throw GRPCError(
        code: .internalError,
        message: "Unable to parse response from the server",
        cause: error
      )
    }
  }
}
