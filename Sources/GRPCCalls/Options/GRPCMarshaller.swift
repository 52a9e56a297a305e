public import Foundation
public import GRPCCore

/// Turns a call's typed messages into bytes and back, at the bottom of the interceptor chain.
///
/// With a marshaller in ``GRPCCallOptions/marshaller``, ``GRPCCall2/writeData(_:)`` takes typed
/// messages, interceptors see them typed, and the handler receives typed responses: the call
/// serializes a request only after every interceptor has handled it, and deserializes a
/// response before the first interceptor sees it (the "open issue" of gRFC L50).
///
/// A request that fails to serialize closes the call with `INTERNAL` (13) and cancels it; so does
/// a response that fails to deserialize, with the message "Unable to parse response from the
/// server".
public protocol GRPCMarshaller: Sendable {
  /// The bytes of a request message.
  func serialize(_ message: any Sendable) throws -> Data

  /// The message a response's bytes hold.
  func deserialize(_ data: Data) throws -> any Sendable

  /// The message a response's bytes hold, read where the transport keeps them.
  ///
  /// A call reads its responses this way when it runs on the transport directly (no retry or
  /// hedging policy); otherwise it gives ``deserialize(_:)`` the bytes the core's executor
  /// copied out, so both must give the same message. The default copies the bytes into `Data`
  /// for ``deserialize(_:)``. A marshaller that can parse a buffer in place, as the protobuf
  /// marshallers of `GRPCProtoCalls` do, saves a copy of every response.
  func deserialize<Bytes: GRPCContiguousBytes>(contiguousBytes bytes: Bytes) throws -> any Sendable

  /// Whether `message` is a response this marshaller produces. A call whose interceptors pass
  /// something else up to its handler closes with `INTERNAL` (13) naming what arrived, instead
  /// of handing it over. `true` by default.
  func accepts(response message: any Sendable) -> Bool

  /// The responses this marshaller produces, for that error: e.g. `grpc.testing.SimpleResponse`.
  var responseDescription: String { get }
}

extension GRPCMarshaller {
  public func deserialize<Bytes: GRPCContiguousBytes>(
    contiguousBytes bytes: Bytes
  ) throws -> any Sendable {
    try self.deserialize(bytes.withUnsafeBytes { Data($0) })
  }

  public func accepts(response message: any Sendable) -> Bool { true }

  public var responseDescription: String { "those of \(Self.self)" }
}
