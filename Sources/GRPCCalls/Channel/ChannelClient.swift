internal import Foundation
internal import GRPCCore

/// What a channel needs of the core's client, whatever its transport: `GRPCClient` is generic
/// over the transport, and a registered transport is only known at run time.
protocol ChannelClient: Sendable {
  func runConnections() async throws
  func beginGracefulShutdown()

  /// A bidirectional-streaming RPC of raw bytes.
  func rawStreaming<Result: Sendable>(
    request: StreamingClientRequest<Data>,
    descriptor: MethodDescriptor,
    options: CallOptions,
    onResponse: @Sendable @escaping (StreamingClientResponse<Data>) async throws -> Result
  ) async throws -> Result
}

extension GRPCClient: ChannelClient {
  func rawStreaming<Result: Sendable>(
    request: StreamingClientRequest<Data>,
    descriptor: MethodDescriptor,
    options: CallOptions,
    onResponse: @Sendable @escaping (StreamingClientResponse<Data>) async throws -> Result
  ) async throws -> Result {
    try await self.bidirectionalStreaming(
      request: request,
      descriptor: descriptor,
      serializer: RawSerializer(),
      deserializer: RawDeserializer(),
      options: options,
      onResponse: onResponse
    )
  }
}

/// A client for `transport`, whatever its concrete type (an `any ClientTransport` opens here).
func makeChannelClient(_ transport: some ClientTransport) -> any ChannelClient {
  GRPCClient(transport: transport)
}
