internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCProtoCalls
internal import SwiftProtobuf

/// Makes calls through the generated TestService client's async/await methods.
///
/// The bench hands every client serialized requests; this one parses each distinct request into
/// its message once (``ParsedRequests``), as an app holds its messages, and the generated face
/// serializes it at every call. Its calls run with flow control on, as every async call does. A
/// streamed response counts its payload's body, as an app reads a field: serializing each again
/// would measure swift-protobuf.
struct AsyncBenchClient: BenchClient {
  let name = "grpc-calls-async"
  let pool: GRPCChannelPool
  private let service: TestService
  private let unaryRequests = ParsedRequests<Grpc_Testing_SimpleRequest>()
  private let streamRequests = ParsedRequests<Grpc_Testing_StreamingOutputCallRequest>()

  init(target: String, flushCoalescing: Bool) {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.flushCoalescing = flushCoalescing
    let pool = GRPCChannelPool()
    self.pool = pool
    self.service = TestService(host: target, callOptions: options, channelPool: pool)
  }

  func unary(_ request: Data) async throws -> Int {
    let message = try self.unaryRequests.message(of: request)
    let response = try await self.service.unaryCall(message)
    return try response.serializedData().count
  }

  func pingPong(rounds: Int, request: Data, lap: @escaping @Sendable () -> Void) async throws {
    let message = try self.streamRequests.message(of: request)
    // Each request goes out once the previous response came back.
    let (pongs, pongSeen) = AsyncStream.makeStream(of: Void.self)
    let received: Int = try await self.service.fullDuplexCall { writer in
      var seen = pongs.makeAsyncIterator()
      for index in 0 ..< rounds {
        // The reader stopped (the call failed or ended): the count below says so.
        if index > 0, await seen.next() == nil { return }
        try await writer.write(message)
      }
    } body: { responses in
      defer { pongSeen.finish() }
      var count = 0
      for try await _ in responses {
        count += 1
        lap()
        pongSeen.yield()
      }
      return count
    }
    guard received == rounds else {
      throw BenchFailure(
        description: "ping-pong stream ended after \(received) of \(rounds) round trips"
      )
    }
  }

  func serverStream(_ request: Data) async throws -> (messages: Int, bytes: Int) {
    let message = try self.streamRequests.message(of: request)
    return try await self.service.streamingOutputCall(message) { responses in
      var result = (messages: 0, bytes: 0)
      for try await response in responses {
        result.messages += 1
        result.bytes += response.payload.body.count
      }
      return result
    }
  }

  func close() {
    self.pool.disconnectAll()
  }
}
