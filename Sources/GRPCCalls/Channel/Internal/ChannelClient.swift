internal import Foundation
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix

/// What a channel needs of the core, whatever its transport: `GRPCClient` and `ClientTransport`
/// are generic over the transport, and a registered transport is only known at run time.
protocol ChannelClient: Sendable {
  func runConnections() async throws
  func beginGracefulShutdown()

  /// The service config's entry for a method, if any.
  func config(forMethod descriptor: MethodDescriptor) -> MethodConfig?

  /// A bidirectional-streaming RPC of raw bytes through `GRPCClient`, whose executor owns
  /// deadlines, retries and hedging.
  func rawStreaming<Result: Sendable>(
    request: StreamingClientRequest<Data>,
    descriptor: MethodDescriptor,
    options: CallOptions,
    onResponse: @Sendable @escaping (StreamingClientResponse<Data>) async throws -> Result
  ) async throws -> Result

  /// Whether a stream's responses fail when its request writer finishes with an error, so that
  /// a read waiting on them in another task can be ended (``ResponsePull``): so with
  /// grpc-swift-nio-transport's HTTP/2 transport, not with every registered one (the in-process
  /// transport's writer leads to the server only).
  var failsResponsesWithWriter: Bool { get }

  /// The transport, when it is grpc-swift-nio-transport's HTTP/2 one: the raw path then runs
  /// its exchange on that transport's own stream type, which the compiler specializes, rather
  /// than through ``withTransportStream(descriptor:options:body:)``, generic at run time.
  var posixTransport: HTTP2ClientTransport.Posix? { get }

  /// Runs `body` on a stream of the transport itself: no executor, no task group (the raw
  /// path, for calls with no retry or hedging policy).
  func withTransportStream<Body: TransportStreamBody>(
    descriptor: MethodDescriptor,
    options: CallOptions,
    body: Body
  ) async throws -> Body.Result
}

/// Work done on one transport stream, whatever the transport's bytes type.
protocol TransportStreamBody: Sendable {
  associatedtype Result: Sendable

  func run<Bytes: GRPCContiguousBytes>(
    on stream: RPCStream<
      RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>,
      RPCWriter<RPCRequestPart<Bytes>>.Closable
    >
  ) async throws -> Result
}

/// A `GRPCClient` and the transport it runs, which the raw path uses directly. The client runs
/// the transport's connections, so both share them.
struct TransportChannelClient<Transport: ClientTransport>: ChannelClient {
  let client: GRPCClient<PlannedTransport<Transport>>
  let transport: Transport
  let posixTransport: HTTP2ClientTransport.Posix?

  init(transport: Transport) {
    self.transport = transport
    self.posixTransport = transport as? HTTP2ClientTransport.Posix
    self.client = GRPCClient(
      transport: PlannedTransport(inner: transport),
      interceptors: [RetryInfoPushback()]
    )
  }

  func runConnections() async throws {
    do {
      try await self.client.runConnections()
    } catch let error as RuntimeError where error.code == .clientIsStopped {
      // Shut down before it ran (a pool shut down while a call was starting the connection):
      // the client refuses to run and never connects the transport, which then never reads its
      // own shutdown, so the streams the raw path queued on it would wait for good. Run the
      // transport alone: it takes the shutdown at once and fails them with UNAVAILABLE.
      try await self.transport.connect()
    }
  }

  /// Shuts the client and the transport down. The client passes the shutdown on to the
  /// transport only once its connections run; the transport reads its own once it runs
  /// (``runConnections()`` runs it even when the client was shut down first) and fails the
  /// streams the raw path queued on it, which would otherwise wait for connections that never
  /// come.
  func beginGracefulShutdown() {
    self.client.beginGracefulShutdown()
    self.transport.beginGracefulShutdown()
  }

  func config(forMethod descriptor: MethodDescriptor) -> MethodConfig? {
    self.transport.config(forMethod: descriptor)
  }

  var failsResponsesWithWriter: Bool {
    self.posixTransport != nil
  }

  func rawStreaming<Result: Sendable>(
    request: StreamingClientRequest<Data>,
    descriptor: MethodDescriptor,
    options: CallOptions,
    onResponse: @Sendable @escaping (StreamingClientResponse<Data>) async throws -> Result
  ) async throws -> Result {
    try await self.client.bidirectionalStreaming(
      request: request,
      descriptor: descriptor,
      serializer: RawSerializer(),
      deserializer: RawDeserializer(),
      options: options,
      onResponse: onResponse
    )
  }

  func withTransportStream<Body: TransportStreamBody>(
    descriptor: MethodDescriptor,
    options: CallOptions,
    body: Body
  ) async throws -> Body.Result {
    try await self.transport.withStream(descriptor: descriptor, options: options) { stream, _ in
      try await body.run(on: stream)
    }
  }
}

/// A client for `transport`, whatever its concrete type (an `any ClientTransport` opens here).
func makeChannelClient(_ transport: some ClientTransport) -> any ChannelClient {
  TransportChannelClient(transport: transport)
}
