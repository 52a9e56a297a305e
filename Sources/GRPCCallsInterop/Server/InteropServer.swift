internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix
internal import NIOCore
internal import Synchronization

/// The gRPC interop `TestService` on a real `GRPCServer` over HTTP/2, plaintext or TLS, with
/// the standard health service (``InteropHealthService``) and server reflection
/// (``InteropReflectionService``).
///
/// ```swift
/// let server = try await InteropServer.start(host: "127.0.0.1", port: 0)
/// print("listening on", server.port)
/// defer { server.stop() }
/// ```
public final class InteropServer: Sendable {
  /// The server's TLS identity, in PEM.
  public struct TLSIdentity: Sendable {
    public var certificateChainPEM: String
    public var privateKeyPEM: String
    /// When set, clients must present a certificate that chains to these roots (mutual TLS).
    public var clientTrustRootsPEM: String?

    public init(
      certificateChainPEM: String,
      privateKeyPEM: String,
      clientTrustRootsPEM: String? = nil
    ) {
      self.certificateChainPEM = certificateChainPEM
      self.privateKeyPEM = privateKeyPEM
      self.clientTrustRootsPEM = clientTrustRootsPEM
    }
  }

  /// The largest message the server sends or accepts: 8 MiB.
  public static let maxMessageSize = 8 * 1024 * 1024

  /// The address the server listens on.
  public let host: String
  /// The port the server listens on (the one bound when started with port 0).
  public let port: Int
  /// What the server saw.
  public let recorder: InteropServerRecorder

  private let server: GRPCServer<HTTP2ServerTransport.Posix>
  private let serveTask: Task<Void, any Error>

  private init(
    host: String,
    port: Int,
    recorder: InteropServerRecorder,
    server: GRPCServer<HTTP2ServerTransport.Posix>,
    serveTask: Task<Void, any Error>
  ) {
    self.host = host
    self.port = port
    self.recorder = recorder
    self.server = server
    self.serveTask = serveTask
  }

  /// `host:port`, for `GRPCRequestOptions`.
  public var target: String { "\(self.host):\(self.port)" }

  /// Starts a server and waits until it listens.
  ///
  /// - Parameters:
  ///   - host: The address to bind, e.g. `127.0.0.1`.
  ///   - port: The port to bind; `0` picks a free one (see ``port``).
  ///   - tls: The server's certificate and key; `nil` serves plaintext.
  ///   - compression: Whether the server takes gzip and deflate. The core's server then also
  ///     compresses every response to a client that accepts one of them (every grpc-calls
  ///     client does), so pass `false` to measure the call path without zlib's cost.
  ///   - maxConcurrentStreams: The most streams a client may open at once on one connection
  ///     (HTTP/2 `SETTINGS_MAX_CONCURRENT_STREAMS`); `nil` sets no limit.
  ///   - maxConnectionIdle: How long a connection may go without an RPC before the server
  ///     closes it with a GOAWAY; `nil` keeps it open.
  ///   - minPingInterval: How often a client may ping while it has calls open; more often, and
  ///     after a few strikes the server closes the connection with GOAWAY ENHANCE_YOUR_CALM
  ///     (`nil`: the transport's default, 5 minutes, as grpc-go's and gRPC core's).
  public static func start(
    host: String = "127.0.0.1",
    port: Int = 0,
    tls: TLSIdentity? = nil,
    compression: Bool = true,
    maxConcurrentStreams: Int? = nil,
    maxConnectionIdle: Duration? = nil,
    minPingInterval: Duration? = nil
  ) async throws -> InteropServer {
    let recorder = InteropServerRecorder()
    var config = HTTP2ServerTransport.Posix.Config.defaults
    config.compression.enabledAlgorithms = compression ? .all : .none
    config.rpc.maxRequestPayloadSize = Self.maxMessageSize
    config.http2.maxConcurrentStreams = maxConcurrentStreams
    config.connection.maxIdleTime = maxConnectionIdle
    if let minPingInterval {
      // Despite its name, the transport applies this interval while calls are open; without
      // calls it allows one ping every 2 hours (gRFC A8).
      config.connection.keepalive.clientBehavior.minPingIntervalWithoutCalls = minPingInterval
    }
    config.channelDebuggingCallbacks.onAcceptTCPConnection = { channel in
      recorder.connectionOpened()
      channel.closeFuture.whenComplete { _ in recorder.connectionClosed() }
      return channel.eventLoop.makeSucceededVoidFuture()
    }

    let security: HTTP2ServerTransport.Posix.TransportSecurity
    if let tls {
      let chain: [TLSConfig.CertificateSource] = [
        .bytes(Array(tls.certificateChainPEM.utf8), format: .pem)
      ]
      let key: TLSConfig.PrivateKeySource = .bytes(Array(tls.privateKeyPEM.utf8), format: .pem)
      if let clientRoots = tls.clientTrustRootsPEM {
        security = .mTLS(certificateChain: chain, privateKey: key) {
          $0.trustRoots = .certificates([.bytes(Array(clientRoots.utf8), format: .pem)])
        }
      } else {
        security = .tls(certificateChain: chain, privateKey: key)
      }
    } else {
      security = .plaintext
    }

    let transport = HTTP2ServerTransport.Posix(
      address: .ipv4(host: host, port: port),
      transportSecurity: security,
      config: config
    )
    let reflection = try InteropReflectionService(listing: [
      "grpc.testing.TestService", "grpc.health.v1.Health",
    ])
    let server = GRPCServer(
      transport: transport,
      services: [InteropTestService(recorder: recorder), recorder.health, reflection]
    )
    let serveTask = Task { try await server.serve() }
    do {
      guard let bound = try await transport.listeningAddress.ipv4 else {
        throw RPCError(code: .internalError, message: "The server is not listening on IPv4")
      }
      return InteropServer(
        host: host,
        port: bound.port,
        recorder: recorder,
        server: server,
        serveTask: serveTask
      )
    } catch {
      server.beginGracefulShutdown()
      serveTask.cancel()
      throw error
    }
  }

  /// Stops accepting connections and closes the existing ones once their RPCs finish.
  public func stop() {
    self.server.beginGracefulShutdown()
    self.recorder.health.close()
  }

  /// Stops the server and waits until it has closed.
  public func stopAndWait() async {
    self.stop()
    _ = await self.serveTask.result
  }

  /// Serves until the task running it is cancelled.
  public func waitUntilStopped() async throws {
    try await withTaskCancellationHandler {
      try await self.serveTask.value
    } onCancel: {
      self.stop()
    }
  }
}
