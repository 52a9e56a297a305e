internal import Foundation
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix

/// Makes calls on the core's `ClientTransport.withStream` directly: no executor, no
/// serializers, no interceptors. The floor the other Swift clients stand on.
struct RawTransportBenchClient: BenchClient {
  let name = "raw-transport"
  let transport: HTTP2ClientTransport.Posix
  private let running: Task<Void, Never>

  init(host: String, port: Int, flushCoalescing: Bool) throws {
    let transport = try BenchTransport.make(
      host: host,
      port: port,
      flushCoalescing: flushCoalescing
    )
    self.transport = transport
    self.running = Task { try? await transport.connect() }
  }

  func unary(_ request: Data) async throws -> Int {
    try await self.stream(BenchMethod.unary) { stream in
      try await stream.outbound.write(.metadata([:]))
      try await stream.outbound.write(.message(GRPCNIOTransportBytes(request)))
      await stream.outbound.finish()
      return try await Self.drain(stream.inbound).bytes
    }
  }

  func pingPong(rounds: Int, request: Data, lap: @escaping @Sendable () -> Void) async throws {
    try await self.stream(BenchMethod.fullDuplex) { stream in
      try await stream.outbound.write(.metadata([:]))
      var iterator = stream.inbound.makeAsyncIterator()
      var completed = 0
      while completed < rounds {
        try await stream.outbound.write(.message(GRPCNIOTransportBytes(request)))
        // Skip the headers; each message completes a round trip.
        while true {
          guard let part = try await iterator.next() else {
            throw BenchFailure(description: "ping-pong stream ended early")
          }
          if case .message = part { break }
          if case .status(let status, _) = part, status.code != .ok {
            throw BenchFailure(description: "ping-pong failed: \(status)")
          }
        }
        completed += 1
        lap()
      }
      await stream.outbound.finish()
      while try await iterator.next() != nil {}
    }
  }

  func serverStream(_ request: Data) async throws -> (messages: Int, bytes: Int) {
    try await self.stream(BenchMethod.streamingOutput) { stream in
      try await stream.outbound.write(.metadata([:]))
      try await stream.outbound.write(.message(GRPCNIOTransportBytes(request)))
      await stream.outbound.finish()
      return try await Self.drain(stream.inbound)
    }
  }

  func close() {
    self.transport.beginGracefulShutdown()
    self.running.cancel()
  }

  private func stream<T: Sendable>(
    _ method: String,
    _ body: (RPCStream<HTTP2ClientTransport.Posix.Inbound, HTTP2ClientTransport.Posix.Outbound>)
      async throws -> T
  ) async throws -> T {
    try await self.transport.withStream(
      descriptor: BenchMethod.descriptor(method),
      options: .defaults
    ) { stream, _ in
      try await body(stream)
    }
  }

  /// Reads to the status; throws if it is not OK.
  private static func drain(
    _ inbound: HTTP2ClientTransport.Posix.Inbound
  ) async throws -> (messages: Int, bytes: Int) {
    var result = (messages: 0, bytes: 0)
    for try await part in inbound {
      switch part {
      case .metadata:
        continue
      case .message(let bytes):
        result.messages += 1
        result.bytes += bytes.count
      case .status(let status, _):
        guard status.code == .ok else {
          throw BenchFailure(description: "call failed: \(status)")
        }
      }
    }
    return result
  }
}
