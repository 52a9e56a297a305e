internal import Foundation
internal import GRPCCallsInput
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix
internal import Logging
internal import NIOCore

extension ChannelKey {
  /// How the channel's transport secures its connections.
  var transportSecurity: HTTP2ClientTransport.Posix.TransportSecurity {
    guard let tls = self.tls else { return .plaintext }
    let roots: TLSConfig.TrustRootsSource =
      tls.rootCertificatesPEM.map { .certificates([.bytes(Array($0.utf8), format: .pem)]) }
      ?? .systemDefault
    guard let identity = tls.identity else {
      return .tls { $0.trustRoots = roots }
    }
    return .mTLS(
      certificateChain: [.bytes(Array(identity.certificateChainPEM.utf8), format: .pem)],
      privateKey: .bytes(Array(identity.privateKeyPEM.utf8), format: .pem)
    ) { $0.trustRoots = roots }
  }

  /// The channel's transport settings; `logger` is where its connections log, `demand` (if
  /// any) is told when a connection goes away or breaks (``ReconnectOnDemand``), `reporter` (if
  /// any) of each connection's progress (``ConnectivityMonitor``).
  func transportConfig(
    logger: Logger,
    demand: ReconnectOnDemand? = nil,
    reporter: ConnectivityReporter? = nil
  ) -> HTTP2ClientTransport.Posix.Config {
    var config = HTTP2ClientTransport.Posix.Config.defaults
    if !self.flushCoalescing {
      config.connection.flushCoalescing = nil
    }
    config.http2.targetWindowSize = self.http2TargetWindowSize
    if let maxFrameSize = self.maxFrameSize {
      config.http2.maxFrameSize = maxFrameSize
    }
    // Under TLS the transport also sends this name as SNI and verifies the certificate with it.
    config.http2.authority = self.authority
    // Every channel accepts gzip and deflate responses and says so in `grpc-accept-encoding`,
    // as gRPC core does, whatever it does to its own requests: a server may compress its
    // answers to a client that sends plain requests. The size limit counts decompressed bytes;
    // flow control counts bytes on the wire (the transport inflates each message it receives),
    // which `grpc.compression_enabled_algorithms_bitset` can turn off.
    var accepted = CompressionAlgorithmSet.none
    for algorithm in self.responseCompression + [self.compression] {
      accepted.insert(algorithm.coreSet)
    }
    config.compression.enabledAlgorithms = accepted
    config.compression.algorithm = self.compression.core
    var keepaliveBackoff: KeepaliveBackoff?
    if let keepalive = self.transportKeepalive {
      // The transport pings whether or not calls are open; `KeepalivePacer` decides which of
      // its pings leave.
      config.connection.keepalive = .init(
        time: .seconds(keepalive.time),
        timeout: .seconds(keepalive.timeout),
        allowWithoutCalls: true
      )
      keepaliveBackoff = KeepaliveBackoff(
        permitWithoutCalls: self.keepalivePermitWithoutCalls,
        interval: keepalive.time,
        logger: logger
      )
    }
    if let backoff = self.reconnectBackoff(
      default: config.backoff.multiplier,
      jitter: config.backoff.jitter
    ) {
      config.backoff = .init(
        initial: backoff.initial,
        max: backoff.max,
        multiplier: backoff.multiplier,
        jitter: config.backoff.jitter
      )
    }
    config.channelDebuggingCallbacks.onCreateTCPConnection = self.connectionSetUp(
      keepalive: keepaliveBackoff,
      demand: demand,
      reporter: reporter
    )
    config.channelDebuggingCallbacks.onCreateHTTP2Stream = { stream in
      stream.eventLoop.makeCompletedFuture { try StreamEndInterpreter.install(on: stream) }
    }
    return config
  }

  /// Whether the channel's names are resolved again every ``nameResolutionInterval``: a DNS
  /// name's addresses may change; and the round-robin balancer drops an address whose
  /// connection went away until a result names it again.
  var resolvesPeriodically: Bool {
    guard self.nameResolutionInterval > 0 else { return false }
    if case .dns = self.target { return true }
    return EndpointLayout(self.serviceConfig) == .endpointPerAddress
  }

  /// The keepalive the transport is given, in seconds, or `nil` for none.
  ///
  /// The transport sends a ping every `time` whether or not the last one was answered, and each
  /// ping restarts the wait for an answer: with a timeout as long as the interval or longer the
  /// wait never ends and a dead peer goes unnoticed. So the interval is stretched to one second
  /// past the timeout; the timeout, the application's patience, is kept (gRPC core's default
  /// timeout is 20 s).
  var transportKeepalive: (time: TimeInterval, timeout: TimeInterval)? {
    guard self.keepaliveInterval > 0 else { return nil }
    let timeout = self.keepaliveTimeout > 0 ? self.keepaliveTimeout : 20
    return (max(self.keepaliveInterval, timeout + 1), timeout)
  }

  /// The shortest reconnection wait and connection-attempt limit, in seconds: gRPC core's
  /// floor for `grpc.initial_reconnect_backoff_ms`, `grpc.max_reconnect_backoff_ms` and
  /// `grpc.min_reconnect_backoff_ms`.
  ///
  /// The transport reconnects after each failed attempt for as long as the channel lives,
  /// whether or not a call waits. Without a floor, a microsecond backoff with an attempt limit
  /// too short to connect in is a loop of thousands of connections a second against the server
  /// (which then misses other clients' connects) and of ports left in TIME_WAIT.
  static let shortestConnectionWait: TimeInterval = 0.1

  /// The reconnection backoff the options ask for, or `nil` for the transport's own: unset
  /// waits are 1 s and 120 s as gRPC core's, an unset multiplier is `defaultMultiplier`; set
  /// waits are at least ``shortestConnectionWait``.
  ///
  /// Under round-robin an unset longest wait is also at most
  /// ``roundRobinReconnectionCap(jitter:)``.
  func reconnectBackoff(
    default defaultMultiplier: Double,
    jitter: Double
  ) -> (initial: Duration, max: Duration, multiplier: Double)? {
    let cap = self.maxBackoff > 0 ? nil : self.roundRobinReconnectionCap(jitter: jitter)
    guard self.initialBackoff > 0 || self.maxBackoff > 0 || self.backoffMultiplier > 0 || cap != nil
    else {
      return nil
    }
    let initial =
      self.initialBackoff > 0 ? max(self.initialBackoff, Self.shortestConnectionWait) : 1
    let longest = self.maxBackoff > 0 ? self.maxBackoff : min(120, cap ?? 120)
    return (
      .seconds(initial),
      .seconds(max(initial, longest)),
      self.backoffMultiplier > 0 ? self.backoffMultiplier : defaultMultiplier
    )
  }

  /// Under round-robin with periodic re-resolution, the longest wait between two connection
  /// attempts to a server that went away, in seconds: one ``nameResolutionInterval`` less the
  /// transport's jitter (`jitter`, a fraction of the wait either way), so that a server that
  /// comes back takes calls again within about one interval. `nil` otherwise.
  ///
  /// A server that went away is named again by the resolver's next results
  /// (``ReconnectOnDemand``), and the balancer makes a new subchannel for it, but that
  /// subchannel keeps trying with its backoff, which grows to gRPC core's 120 s against a
  /// server that stays down. So the interval, not the backoff, bounds how long a server back
  /// up waits for its first call.
  func roundRobinReconnectionCap(jitter: Double) -> TimeInterval? {
    guard self.resolvesPeriodically,
      EndpointLayout(self.serviceConfig) == .endpointPerAddress
    else { return nil }
    return self.nameResolutionInterval / (1 + max(0, jitter))
  }

  /// The limit on each connection attempt, in seconds (``connectTimeout``, at least
  /// ``shortestConnectionWait``), or `nil` for none.
  var connectionAttemptLimit: TimeInterval? {
    self.connectTimeout > 0 ? max(self.connectTimeout, Self.shortestConnectionWait) : nil
  }

  /// What each new TCP connection gets before it connects: the connect timeout, the detector
  /// of peers that answer in HTTP/1, the answerer of the server's PINGs (``PeerPingAnswerer``),
  /// the recorder of its GOAWAY (``GoAwayRecorder``, which each stream's
  /// ``StreamEndInterpreter`` reads), the filter that keeps a frame refused to a closed stream
  /// from closing the connection (``ClosedStreamFrameFilter``) and, under TLS, the handler that
  /// names the certificate's hosts when verification fails. The reporter hears of the
  /// connection's attempt, establishment, GOAWAY and close.
  private func connectionSetUp(
    keepalive: KeepaliveBackoff?,
    demand: ReconnectOnDemand?,
    reporter: ConnectivityReporter?
  ) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
    // The transport has no connect-timeout setting (Design article, "Where the core needed help"). This callback runs in the
    // bootstrap's initializer, before the socket connects and after the TLS handler is added:
    // the socket option bounds the TCP connect, the handler the whole attempt up to the
    // server's first bytes.
    let timeout = self.connectionAttemptLimit.map { TimeAmount.nanoseconds(Int64($0 * 1e9)) }
    let namesCertificates = self.tls != nil
    let expectedName = self.authority ?? self.target.hostName
    return { channel in
      channel.eventLoop.makeCompletedFuture {
        if let timeout {
          try channel.syncOptions?.setOption(ChannelOptions.connectTimeout, value: timeout)
          try channel.pipeline.syncOperations.addHandler(
            HandshakeTimeoutHandler(limit: timeout),
            position: .first
          )
        }
        try HTTP1AnswerDetector.install(on: channel)
        try PeerPingAnswerer.install(on: channel)
        let connection = reporter?.attemptStarted()
        var onGoAway: (@Sendable (GoAwayRecorder.GoAway) -> Void)?
        if keepalive != nil || demand != nil || reporter != nil {
          onGoAway = { goAway in
            if let keepalive, KeepaliveBackoff.isTooManyPings(goAway) {
              keepalive.serverSaidTooManyPings()
            }
            demand?.connectionWentAway(first: goAway.isFirst, hadStreams: goAway.hadStreams)
            if let connection, goAway.isFirst {
              reporter?.wentAway(connection)
            }
          }
        }
        var onEstablished: (@Sendable () -> Void)?
        if let connection {
          onEstablished = { reporter?.established(connection) }
        }
        let record: ConnectionRecord
        do {
          record = try GoAwayRecorder.install(
            on: channel,
            onGoAway: onGoAway,
            onEstablished: onEstablished
          )
        } catch {
          // The connection fails here, before anything could report its close.
          if let connection { reporter?.abandoned(connection) }
          throw error
        }
        if demand != nil || connection != nil {
          let ended = NIOLoopBound(record, eventLoop: channel.eventLoop)
          channel.closeFuture.whenComplete { _ in
            demand?.connectionEnded(ended.value)
            if let connection {
              reporter?.closed(connection, record: ended.value)
            }
          }
        }
        try ClosedStreamFrameFilter.install(on: channel, record: record)
        if let keepalive {
          try KeepalivePacer.install(on: channel, record: record, backoff: keepalive)
        }
        if namesCertificates {
          try CertificateNamesHandler.install(on: channel, expectedName: expectedName)
        }
      }
    }
  }
}
