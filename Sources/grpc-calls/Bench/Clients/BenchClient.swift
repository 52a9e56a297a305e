internal import Foundation
internal import GRPCCore

/// One way of making calls, measured side by side with the others.
///
/// Every client speaks to the same interop server with the same transport settings, so the
/// differences between them are the costs of the layers above the transport.
protocol BenchClient: Sendable {
  /// The client's name in reports: `grpc-calls`, `grpc-calls-async`, `grpc-swift-2`,
  /// `grpc-swift-2-proto`, `raw-transport`.
  var name: String { get }

  /// One UnaryCall with `request` (a serialized SimpleRequest); returns the response's size.
  func unary(_ request: Data) async throws -> Int

  /// `rounds` round trips of `request` (a serialized StreamingOutputCallRequest) on one
  /// FullDuplexCall; `lap` is called after each round trip.
  func pingPong(rounds: Int, request: Data, lap: @escaping @Sendable () -> Void) async throws

  /// One StreamingOutputCall with `request`; returns the messages and bytes received.
  func serverStream(_ request: Data) async throws -> (messages: Int, bytes: Int)

  /// Closes the client's connections.
  func close()
}

/// The interop methods the bench calls.
enum BenchMethod {
  static let service = "grpc.testing.TestService"
  static let unary = "UnaryCall"
  static let fullDuplex = "FullDuplexCall"
  static let streamingOutput = "StreamingOutputCall"

  static func descriptor(_ method: String) -> MethodDescriptor {
    MethodDescriptor(fullyQualifiedService: Self.service, method: method)
  }
}

/// A client failure the bench reports (a call that did not succeed).
struct BenchFailure: Error, CustomStringConvertible {
  var description: String
}
