internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix
internal import GRPCProtobuf
internal import SwiftProtobuf

/// Makes calls through grpc-swift-2's `GRPCClient` directly, with the same transport settings,
/// coding messages as `Coding` says.
struct CoreBenchClient<Coding: CoreBenchCoding>: BenchClient {
  let name = Coding.name
  private let client: GRPCClient<HTTP2ClientTransport.Posix>
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
      request: ClientRequest(message: try Coding.unaryRequest(request)),
      descriptor: BenchMethod.descriptor(BenchMethod.unary),
      serializer: Coding.UnarySerializer(),
      deserializer: Coding.UnaryDeserializer(),
      options: .defaults
    ) { response in
      try Coding.size(of: response.message)
    }
  }

  func pingPong(rounds: Int, request: Data, lap: @escaping @Sendable () -> Void) async throws {
    let message = try Coding.streamRequest(request)
    let (requests, sink) = AsyncStream.makeStream(of: Coding.StreamSerializer.Message.self)
    try await self.client.bidirectionalStreaming(
      request: StreamingClientRequest { writer in
        for await message in requests {
          try await writer.write(message)
        }
      },
      descriptor: BenchMethod.descriptor(BenchMethod.fullDuplex),
      serializer: Coding.StreamSerializer(),
      deserializer: Coding.StreamDeserializer(),
      options: .defaults
    ) { response in
      var iterator = response.messages.makeAsyncIterator()
      for _ in 0 ..< rounds {
        sink.yield(message)
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
      request: ClientRequest(message: try Coding.streamRequest(request)),
      descriptor: BenchMethod.descriptor(BenchMethod.streamingOutput),
      serializer: Coding.StreamSerializer(),
      deserializer: Coding.StreamDeserializer(),
      options: .defaults
    ) { response in
      var result = (messages: 0, bytes: 0)
      for try await message in response.messages {
        result.messages += 1
        result.bytes += Coding.bodySize(of: message)
      }
      return result
    }
  }

  func close() {
    self.client.beginGracefulShutdown()
    self.running.cancel()
  }
}

/// How a `GRPCClient` bench client codes the bench's messages.
protocol CoreBenchCoding: Sendable {
  associatedtype UnarySerializer: BenchSerializer where UnarySerializer.Message: Sendable
  associatedtype UnaryDeserializer: BenchDeserializer where UnaryDeserializer.Message: Sendable
  associatedtype StreamSerializer: BenchSerializer where StreamSerializer.Message: Sendable
  associatedtype StreamDeserializer: BenchDeserializer
  where StreamDeserializer.Message: Sendable

  static var name: String { get }
  static func unaryRequest(_ bytes: Data) throws -> UnarySerializer.Message
  static func streamRequest(_ bytes: Data) throws -> StreamSerializer.Message
  /// A unary response's size.
  static func size(of response: UnaryDeserializer.Message) throws -> Int
  /// The bytes a streamed response carries for the app.
  static func bodySize(of response: StreamDeserializer.Message) -> Int
}

/// A serializer a ``CoreBenchCoding`` names, made where a call needs it.
protocol BenchSerializer: MessageSerializer {
  init()
}

/// A deserializer a ``CoreBenchCoding`` names, made where a call needs it.
protocol BenchDeserializer: MessageDeserializer {
  init()
}

extension RawSerializer: BenchSerializer {}
extension RawDeserializer: BenchDeserializer {}
extension ProtobufSerializer: BenchSerializer {}
extension ProtobufDeserializer: BenchDeserializer {}

/// Bytes in, bytes out: the core's own cost, with no message type.
enum RawBenchCoding: CoreBenchCoding {
  static let name = "grpc-swift-2"
  static func unaryRequest(_ bytes: Data) -> Data { bytes }
  static func streamRequest(_ bytes: Data) -> Data { bytes }
  static func size(of response: Data) -> Int { response.count }
  static func bodySize(of response: Data) -> Int { response.count }
  typealias UnarySerializer = RawSerializer
  typealias UnaryDeserializer = RawDeserializer
  typealias StreamSerializer = RawSerializer
  typealias StreamDeserializer = RawDeserializer
}

/// The protobuf coders grpc-swift-2's generated clients use: the peer of the async face, which
/// also hands the app parsed messages. Messages are handled as ``AsyncBenchClient`` does: each
/// distinct request is parsed into its message once and serialized by every call, a unary
/// response is serialized again for its size, and a streamed response counts its payload's body.
enum ProtobufBenchCoding: CoreBenchCoding {
  static let name = "grpc-swift-2-proto"
  private static let unaryRequests = ParsedRequests<Grpc_Testing_SimpleRequest>()
  private static let streamRequests = ParsedRequests<Grpc_Testing_StreamingOutputCallRequest>()
  static func unaryRequest(_ bytes: Data) throws -> Grpc_Testing_SimpleRequest {
    try self.unaryRequests.message(of: bytes)
  }
  static func streamRequest(_ bytes: Data) throws -> Grpc_Testing_StreamingOutputCallRequest {
    try self.streamRequests.message(of: bytes)
  }
  static func size(of response: Grpc_Testing_SimpleResponse) throws -> Int {
    try response.serializedData().count
  }
  static func bodySize(of response: Grpc_Testing_StreamingOutputCallResponse) -> Int {
    response.payload.body.count
  }
  typealias UnarySerializer = ProtobufSerializer<Grpc_Testing_SimpleRequest>
  typealias UnaryDeserializer = ProtobufDeserializer<Grpc_Testing_SimpleResponse>
  typealias StreamSerializer = ProtobufSerializer<Grpc_Testing_StreamingOutputCallRequest>
  typealias StreamDeserializer = ProtobufDeserializer<Grpc_Testing_StreamingOutputCallResponse>
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
