internal import Foundation
internal import GRPCCalls
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix

/// Makes calls through grpc-swift-2's `GRPCClient` directly, with the same transport settings.
struct CoreBenchClient: BenchClient {
  let name = "grpc-swift-2"
  let client: GRPCClient<HTTP2ClientTransport.Posix>
  private let running: Task<Void, Never>

  init(host: String, port: Int, flushCoalescing: Bool) throws {
    let client = GRPCClient(
      transport: try BenchTransport.make(host: host, port: port, flushCoalescing: flushCoalescing)
    )
    self.client = client
    self.running = Task { try? await client.runConnections() }
  }

  func unary(_ request: Data) async throws -> Int {
    try await self.client.unary(
      request: ClientRequest(message: request),
      descriptor: Self.descriptor(BenchMethod.unary),
      serializer: RawSerializer(),
      deserializer: RawDeserializer(),
      options: .defaults
    ) { response in
      try response.message.count
    }
  }

  func pingPong(rounds: Int, request: Data, lap: @escaping @Sendable () -> Void) async throws {
    let (requests, sink) = AsyncStream.makeStream(of: Data.self)
    try await self.client.bidirectionalStreaming(
      request: StreamingClientRequest { writer in
        for await message in requests {
          try await writer.write(message)
        }
      },
      descriptor: Self.descriptor(BenchMethod.fullDuplex),
      serializer: RawSerializer(),
      deserializer: RawDeserializer(),
      options: .defaults
    ) { response in
      var iterator = response.messages.makeAsyncIterator()
      for _ in 0 ..< rounds {
        sink.yield(request)
        guard try await iterator.next() != nil else {
          throw BenchFailure(description: "ping-pong stream ended early")
        }
        lap()
      }
      sink.finish()
      while try await iterator.next() != nil {}
    }
  }

  func serverStream(_ request: Data) async throws -> (messages: Int, bytes: Int) {
    try await self.client.serverStreaming(
      request: ClientRequest(message: request),
      descriptor: Self.descriptor(BenchMethod.streamingOutput),
      serializer: RawSerializer(),
      deserializer: RawDeserializer(),
      options: .defaults
    ) { response in
      var result = (messages: 0, bytes: 0)
      for try await message in response.messages {
        result.messages += 1
        result.bytes += message.count
      }
      return result
    }
  }

  func close() {
    self.client.beginGracefulShutdown()
    self.running.cancel()
  }

  static func descriptor(_ method: String) -> MethodDescriptor {
    MethodDescriptor(fullyQualifiedService: BenchMethod.service, method: method)
  }
}

/// The transport every Swift bench client below GRPCCall2 uses: the settings GRPCCall2 uses.
enum BenchTransport {
  static func make(
    host: String,
    port: Int,
    flushCoalescing: Bool
  ) throws
    -> HTTP2ClientTransport.Posix
  {
    var config = HTTP2ClientTransport.Posix.Config.defaults
    if !flushCoalescing {
      config.connection.flushCoalescing = nil
    }
    return try HTTP2ClientTransport.Posix(
      target: .ipv4(address: host, port: port),
      transportSecurity: .plaintext,
      config: config
    )
  }
}
