public import Foundation
public import GRPCCore

/// Every setting of a call and of the channel it runs on, in one value.
///
/// `GRPCCallOptions` is a value type: a `let` is immutable and a `var` is the mutable variant, so
/// two users of the library in one process never share configuration by accident. A service holds
/// default options; a call may replace them whole.
///
/// Options fall in two groups:
/// - **Call-level** options (``timeout``, ``initialMetadata``, ``oauth2AccessToken``,
///   ``authTokenProvider``, ``enableFlowControl``, ``interceptorFactories``, ``marshaller``,
///   ``executionPolicy``, ``waitForReady``) apply to one call and never change which channel it runs on.
/// - **Channel-level** options (``responseSizeLimit``, ``transportType``, ``userAgentPrefix``,
///   ``userAgentSuffix``, ``flushCoalescing``, ``http2TargetWindowSize``, ``pemRootCertificates``,
///   ``pemPrivateKey``, ``pemCertificateChain``, ``hostNameOverride``, ``serverAuthority``,
///   ``compressionAlgorithm``, ``keepaliveInterval``, ``keepaliveTimeout``,
///   ``keepalivePermitWithoutCalls``, ``connectMinTimeout``, ``connectInitialBackoff``, ``connectMaxBackoff``,
///   ``minRetryInterval``, ``maxRetryInterval``, ``retryFactor``, ``enableRetry``,
///   ``additionalChannelArgs``, ``serviceConfig``, ``loadBalancingPolicy``,
///   ``nameResolutionInterval``, ``connectionsPerTarget``, ``transport``,
///   ``logContext``, ``channelPoolDomain``, ``channelId``) form the channel key: calls share
///   a channel (one HTTP/2 connection) only when all of them are equal.
///
/// Durations are `TimeInterval` seconds, as in the gRPC Objective-C API; negative values and
/// NaN clamp to zero, values over ``longestInterval`` (infinity included) to it.
public struct GRPCCallOptions: Sendable {
  // MARK: Call-level options

  /// The deadline of the call, in seconds from its start; `0` (the default) means no deadline.
  ///
  /// A call still running at its deadline closes with `DEADLINE_EXCEEDED` (4).
  public var timeout: TimeInterval {
    get { self._timeout }
    set { self._timeout = Self.clamped(newValue) }
  }
  private var _timeout: TimeInterval = 0

  /// Metadata sent with the request headers of every call.
  ///
  /// Keys ending in `-bin` carry binary values. An `authorization` entry is replaced when
  /// ``oauth2AccessToken`` or ``authTokenProvider`` supplies a token.
  public var initialMetadata: Metadata = [:]

  /// An OAuth2 access token sent as `authorization: Bearer <token>`.
  ///
  /// Takes precedence over ``authTokenProvider`` when both are set.
  public var oauth2AccessToken: String?

  /// Supplies an access token at the start of each call, sent as `authorization: Bearer <token>`.
  ///
  /// Asked exactly once per call. A `nil` token sends the call without authorization.
  public var authTokenProvider: (any GRPCAuthorizationProvider)?

  /// Whether the call is flow controlled (gRFC L49). Off by default.
  ///
  /// On: the handler gets ``GRPCResponseHandler/didWriteData()`` once per written message, after
  /// the transport accepted it; response messages are delivered only against the demand given
  /// with ``GRPCCall2/receiveNextMessages(_:)``, and with no demand the call stops reading from
  /// the HTTP/2 stream, so the server is held back by HTTP/2 flow control. The close (an error
  /// included) is delivered without demand once no message waits for it.
  ///
  /// Off: messages are delivered as they arrive and `didWriteData` is not called.
  public var enableFlowControl: Bool = false

  /// Interceptors for the call, outermost first (gRFC L50).
  ///
  /// A call asks each factory for an interceptor when the interceptor above it first passes a
  /// request on; global interceptors (``GRPCCall2/registerGlobalInterceptor(_:)``) come after
  /// these, then the transport. Set when the call is made: an interceptor that changes this list
  /// in the options it passes on changes nothing.
  public var interceptorFactories: [any GRPCInterceptorFactory] = []

  /// Serializes typed request messages and deserializes responses, below the interceptors.
  ///
  /// `nil` (the default): the call sends and receives `Data`. See ``GRPCMarshaller``.
  public var marshaller: (any GRPCMarshaller)?

  /// How the core retries or hedges the call; `nil` (the default) tries once.
  ///
  /// A failed attempt whose server asked for a delay (the `RetryInfo` of a rich status, or the
  /// `grpc-retry-pushback-ms` trailer; see ``GRPCError/serverRetryDelay``) is followed by the
  /// next one after that delay rather than the policy's backoff.
  ///
  /// Applies only while ``enableRetry`` is on. An invalid policy fails the call with
  /// `INVALID_ARGUMENT`.
  public var executionPolicy: GRPCExecutionPolicy?

  /// Whether the call waits for the channel to connect instead of failing at once while it
  /// cannot (gRPC's "wait for ready"). Off by default, as in gRPC.
  ///
  /// Off: a call made while the channel is in transient failure (the server is down, the
  /// connection is being re-established after a failure) closes with `UNAVAILABLE` (14). On: it
  /// waits until a connection is ready, its deadline passes, or it is cancelled; set a
  /// ``timeout`` with it so that it cannot wait forever.
  public var waitForReady: Bool = false

  // MARK: Channel-level options

  /// The largest response message accepted, in bytes; `0` (the default) means 4 MiB.
  ///
  /// A larger response closes the call with `RESOURCE_EXHAUSTED` (8) and a message naming both
  /// sizes.
  public var responseSizeLimit: Int {
    get { self.channelSettings.responseSizeLimit }
    set {
      self.channelSettings.responseSizeLimit = max(0, newValue)
    }
  }

  /// How the channel reaches the server: TLS (the default) or plaintext.
  public var transportType: GRPCTransportType {
    get { self.channelSettings.transportType }
    set { self.channelSettings.transportType = newValue }
  }

  /// A transport from the ``GRPCTransportRegistry``, used instead of ``transportType``;
  /// `nil` (the default) uses ``transportType``.
  ///
  /// ``GRPCTransportID/secure`` and ``GRPCTransportID/insecure`` are the same as
  /// ``transportType`` `.tls` and `.insecure`. An ID with no registered factory falls back to
  /// ``transportType`` and the channel logs a warning.
  public var transport: GRPCTransportID? {
    get { self.channelSettings.transport }
    set { self.channelSettings.transport = newValue }
  }

  /// Metadata added to every log record the library writes about the channel (opened,
  /// closed, transport fallbacks), to tell one component's channels from another's.
  public var logContext: [String: String] {
    get { self.channelSettings.logContext }
    set { self.channelSettings.logContext = newValue }
  }

  /// Put in front of the library's own token in the `user-agent` sent on every call.
  public var userAgentPrefix: String? {
    get { self.channelSettings.userAgentPrefix }
    set { self.channelSettings.userAgentPrefix = newValue }
  }

  /// Put after the library's own token in the `user-agent` sent on every call.
  public var userAgentSuffix: String? {
    get { self.channelSettings.userAgentSuffix }
    set { self.channelSettings.userAgentSuffix = newValue }
  }

  /// Calls with different domains never share a channel.
  ///
  /// Use it to isolate one component's connections from another's in the same process.
  public var channelPoolDomain: String? {
    get { self.channelSettings.channelPoolDomain }
    set { self.channelSettings.channelPoolDomain = newValue }
  }

  /// Calls with different ids never share a channel, even with all other options equal.
  public var channelId: Int {
    get { self.channelSettings.channelId }
    set { self.channelSettings.channelId = newValue }
  }

  /// Whether the channel batches HTTP/2 writes for up to 100 µs (or 64 KiB) before flushing.
  ///
  /// Coalescing saves system calls under load but adds latency to calls that wait on each
  /// other. Off by default: on this project's benchmark machine (2 cores, loopback) turning it
  /// off was faster in every scenario but 16-byte server streaming, where the two were within
  /// noise; see the Benchmarks article.
  public var flushCoalescing: Bool {
    get { self.channelSettings.flushCoalescing }
    set { self.channelSettings.flushCoalescing = newValue }
  }

  /// The HTTP/2 flow-control window the channel advertises for each stream and for the
  /// connection, in bytes: how much a server may send ahead of what the client has read.
  ///
  /// It limits what a flow-controlled call buffers while it waits for demand (see
  /// ``enableFlowControl``): a smaller window holds less in memory; a larger one streams faster
  /// over links with long round trips. `0` (the default) means 8 MiB, the core's default.
  /// Values are clamped to 2^31 − 1.
  ///
  /// This library holds at most one undelivered message per call; the core's HTTP/2 transport
  /// reads ahead about two windows more. Measured with the server in another process, reading
  /// a 1 GiB stream of 1 MiB messages at one per 10 ms (`grpc-calls bench --scenario
  /// memory-backpressure`): the client grew by 36 MiB at a 1 MiB window and 50–52 MiB at the
  /// default 8 MiB (up to 74 MiB in debug builds), against 343–840 MiB without flow control.
  /// CI checks it stays within 64 MiB + 8 windows.
  ///
  /// On the wire, a server streaming to a reader with no demand sends about two windows and
  /// stops (1.5–2 MiB at a 1 MiB window; the tests bound it at 8 windows). A grpc-swift-2
  /// server's writer may buffer far more on its own side, however: it learns that the stream
  /// stopped being writable only after a hop to the event loop, and keeps what it writes
  /// meanwhile (2–27 MiB, and once the whole 128 MiB test stream on a heavily loaded machine).
  public var http2TargetWindowSize: Int {
    get { self.channelSettings.http2TargetWindowSize }
    set {
      self.channelSettings.http2TargetWindowSize = min(max(0, newValue), Int(Int32.max))
    }
  }

  /// PEM trust roots (one or more certificates) that the server's certificate must chain to;
  /// `nil` (the default) trusts the system's roots.
  public var pemRootCertificates: String? {
    get { self.channelSettings.pemRootCertificates }
    set { self.channelSettings.pemRootCertificates = newValue }
  }

  /// The PEM private key of the client certificate, for mutual TLS; used only together with
  /// ``pemCertificateChain``.
  public var pemPrivateKey: String? {
    get { self.channelSettings.pemPrivateKey }
    set { self.channelSettings.pemPrivateKey = newValue }
  }

  /// The PEM client certificate chain, leaf first, for mutual TLS; used only together with
  /// ``pemPrivateKey``.
  public var pemCertificateChain: String? {
    get { self.channelSettings.pemCertificateChain }
    set { self.channelSettings.pemCertificateChain = newValue }
  }

  /// The name the server's certificate is verified against and sent as TLS SNI, in place of
  /// the host connected to. It is also the `:authority` sent, unless ``serverAuthority`` is
  /// set (as gRPC core's target-name override also sets the default authority).
  public var hostNameOverride: String? {
    get { self.channelSettings.hostNameOverride }
    set { self.channelSettings.hostNameOverride = newValue }
  }

  /// The `:authority` sent with every call; `nil` (the default) derives it from the host.
  ///
  /// A channel-level option: the core sets the authority per connection (Design article, "Where the core needed help"). Under
  /// TLS it is also the name the certificate is verified against, so it must equal
  /// ``hostNameOverride`` when both are set, or the call fails with `INVALID_ARGUMENT`.
  public var serverAuthority: String? {
    get { self.channelSettings.serverAuthority }
    set { self.channelSettings.serverAuthority = newValue }
  }

  /// How request messages are compressed; `.none` by default.
  ///
  /// This option is about requests only. Every channel accepts responses compressed with gzip
  /// or deflate and advertises both in `grpc-accept-encoding`, as gRPC core does, so a server
  /// that compresses its answers works with any setting. The response size limit applies to the
  /// decompressed message.
  public var compressionAlgorithm: GRPCCompressionAlgorithm {
    get { self.channelSettings.compressionAlgorithm }
    set { self.channelSettings.compressionAlgorithm = newValue }
  }

  /// Seconds between HTTP/2 keepalive pings while calls run; `0` (the default) sends none.
  ///
  /// An interval no longer than ``keepaliveTimeout`` is stretched to one second past it: the
  /// transport restarts the wait for an answer with each ping, so it could otherwise never
  /// notice a dead peer (Design article, "Where the core needed help").
  public var keepaliveInterval: TimeInterval {
    get { self.channelSettings.keepaliveInterval }
    set {
      self.channelSettings.keepaliveInterval = Self.clamped(newValue)
    }
  }

  /// Seconds to wait for a keepalive ping's answer before the connection is closed (its calls
  /// fail with `UNAVAILABLE`); `0` (the default) means 20 seconds.
  public var keepaliveTimeout: TimeInterval {
    get { self.channelSettings.keepaliveTimeout }
    set {
      self.channelSettings.keepaliveTimeout = Self.clamped(newValue)
    }
  }

  /// Whether keepalive pings continue while the channel's connection has no call open (gRPC
  /// core's `grpc.keepalive_permit_without_calls`); `false` (the default) pings only while
  /// calls run, and resumes when one starts. Servers may count pings with no call as abuse
  /// (grpc-go's `keepalive.EnforcementPolicy.PermitWithoutStream`). The pings keep the
  /// connection, not the channel: ``GRPCChannelPool`` still closes a channel that has had no call
  /// for its ``GRPCChannelPool/Config/idleTimeout`` (30 s by default), so raise that too to keep
  /// an idle connection open longer. A channel-level option.
  public var keepalivePermitWithoutCalls: Bool {
    get { self.channelSettings.keepalivePermitWithoutCalls }
    set { self.channelSettings.keepalivePermitWithoutCalls = newValue }
  }

  /// The longest a connection attempt may take, in seconds, until the server first answers;
  /// `0` (the default) leaves SwiftNIO's 10 s TCP connect timeout and no handshake limit.
  ///
  /// An attempt whose TCP connect has not completed, or whose server has sent nothing (no TLS
  /// ServerHello, no HTTP/2 SETTINGS) by then, is closed; calls waiting on it fail with
  /// `UNAVAILABLE` and the channel reconnects after its backoff. Values above 10 s still
  /// bound the handshake, but the TCP connect itself gives up at 10 s. Values under 0.1 s count
  /// as 0.1 s, gRPC core's floor: shorter, no attempt could connect, and the channel would
  /// reconnect without pause.
  public var connectMinTimeout: TimeInterval {
    get { self.channelSettings.connectMinTimeout }
    set {
      self.channelSettings.connectMinTimeout = Self.clamped(newValue)
    }
  }

  /// The wait before the first reconnection attempt, in seconds; `0` (the default) means 1 s.
  ///
  /// Waits under 0.1 s count as 0.1 s, gRPC core's floor: the channel reconnects after every
  /// failed attempt for as long as it lives, and a shorter wait hammers the server.
  public var connectInitialBackoff: TimeInterval {
    get { self.channelSettings.connectInitialBackoff }
    set {
      self.channelSettings.connectInitialBackoff = Self.clamped(newValue)
    }
  }

  /// The longest wait between reconnection attempts, in seconds; `0` (the default) means 120 s,
  /// or under round-robin with a ``nameResolutionInterval`` the interval divided by 1.2 (25 s
  /// by default), so that the wait, jittered by up to 20% either way, stays within it and a
  /// server back up takes calls again within about one interval. It is never shorter than the
  /// first wait (``connectInitialBackoff``, at least 0.1 s).
  public var connectMaxBackoff: TimeInterval {
    get { self.channelSettings.connectMaxBackoff }
    set {
      self.channelSettings.connectMaxBackoff = Self.clamped(newValue)
    }
  }

  /// gRPC Objective-C's name for the first reconnection wait, in seconds: the same setting as
  /// ``connectInitialBackoff``, which wins when both are set. `0` (the default): unset.
  public var minRetryInterval: TimeInterval {
    get { self.channelSettings.minRetryInterval }
    set {
      self.channelSettings.minRetryInterval = Self.clamped(newValue)
    }
  }

  /// gRPC Objective-C's name for the longest reconnection wait, in seconds: the same setting as
  /// ``connectMaxBackoff``, which wins when both are set. `0` (the default): unset.
  public var maxRetryInterval: TimeInterval {
    get { self.channelSettings.maxRetryInterval }
    set {
      self.channelSettings.maxRetryInterval = Self.clamped(newValue)
    }
  }

  /// How much each reconnection wait grows over the last, up to the longest wait; `0` (the
  /// default) keeps the transport's 1.6, as gRPC core's. Values between 0 and 1 count as 1 (the
  /// wait never shrinks); NaN and negative values as unset.
  public var retryFactor: Double {
    get { self.channelSettings.retryFactor }
    set {
      let factor = Self.clamped(newValue)
      self.channelSettings.retryFactor = factor > 0 ? max(1, factor) : 0
    }
  }

  /// Whether calls on the channel follow their ``executionPolicy``; on by default. Off, every
  /// call is tried once.
  public var enableRetry: Bool {
    get { self.channelSettings.enableRetry }
    set { self.channelSettings.enableRetry = newValue }
  }

  /// The channel's service config: per-method timeouts, `waitForReady`, message size limits,
  /// retry and hedging policies, retry throttling and the load-balancing policy, as gRPC
  /// core, grpc-go and grpc-java take them (``GRPCServiceConfig/parse(_:)`` reads gRPC's JSON
  /// form; the `grpc.service_config` channel argument sets it too). `nil` (the default): none.
  ///
  /// A method's config applies to every call of it, on every face: the deadline is the shorter
  /// of the call's ``timeout`` and the config's, ``waitForReady`` is on when either asks for it
  /// (a call cannot turn the config's off), the call's ``executionPolicy`` replaces the
  /// config's, and the response limit is the smaller of ``responseSizeLimit`` and the config's
  /// `maxResponseMessageBytes`. A call
  /// larger than the config's `maxRequestMessageBytes` fails with `RESOURCE_EXHAUSTED` before it
  /// leaves. Retries and hedges from the config follow ``enableRetry`` and the config's
  /// `retryThrottling`.
  public var serviceConfig: ServiceConfig? {
    get { self.channelSettings.serviceConfig }
    set { self.channelSettings.serviceConfig = newValue }
  }

  /// How the channel picks among its server's addresses; `nil` (the default) keeps the service
  /// config's choice, or pick-first. Set, it replaces the service config's
  /// `loadBalancingConfig`; the `grpc.lb_policy_name` channel argument sets it too.
  public var loadBalancingPolicy: GRPCLoadBalancingPolicy? {
    get { self.channelSettings.loadBalancingPolicy }
    set { self.channelSettings.loadBalancingPolicy = newValue }
  }

  /// How often a channel resolves its host again, in seconds: a DNS name, so that addresses
  /// added or removed reach its balancer, and under round-robin any host, so that the balancer
  /// takes back an address whose server went away. `0`: only when a connection fails or goes
  /// away. 30 s by default (``defaultNameResolutionInterval``); at least 1 s.
  public var nameResolutionInterval: TimeInterval {
    get { self.channelSettings.nameResolutionInterval }
    set {
      let interval = Self.clamped(newValue)
      self.channelSettings.nameResolutionInterval = interval > 0 ? max(1, interval) : 0
    }
  }

  /// The default of ``nameResolutionInterval``: 30 s.
  public static let defaultNameResolutionInterval: TimeInterval = 30

  /// How many HTTP/2 connections the channel may open to its target, each call going to the
  /// one with the fewest calls in flight; 1 by default, at most ``maxConnectionsPerTarget``.
  ///
  /// A server takes only so many streams at once on one connection (its
  /// `SETTINGS_MAX_CONCURRENT_STREAMS`, 100 for many); past that, calls wait for a stream. With
  /// more connections, more calls run at once. Connections open as calls need them: a second
  /// one when a call comes while every open connection has one in flight. Under round-robin
  /// each of them holds a connection per address.
  public var connectionsPerTarget: Int {
    get { self.channelSettings.connectionsPerTarget }
    set {
      self.channelSettings.connectionsPerTarget = min(
        max(1, newValue),
        Self.maxConnectionsPerTarget
      )
    }
  }

  /// The most connections ``connectionsPerTarget`` asks for: 64.
  public static let maxConnectionsPerTarget = 64

  /// gRPC channel arguments, by their gRPC core names; a value of the wrong kind fails the call
  /// with `INVALID_ARGUMENT` naming it. A name not in this table is ignored, as gRPC core ignores
  /// arguments it does not know, with a warning on the pool's logger when its channel opens; it
  /// still keeps the channel apart from those without it. Applied over the options above:
  ///
  /// | name | value | sets |
  /// |---|---|---|
  /// | `grpc.max_receive_message_length` | bytes | ``responseSizeLimit`` |
  /// | `grpc.keepalive_time_ms` | ms | ``keepaliveInterval`` |
  /// | `grpc.keepalive_timeout_ms` | ms | ``keepaliveTimeout`` |
  /// | `grpc.keepalive_permit_without_calls` | 0 or 1 | ``keepalivePermitWithoutCalls`` |
  /// | `grpc.min_reconnect_backoff_ms` | ms | ``connectMinTimeout`` |
  /// | `grpc.initial_reconnect_backoff_ms` | ms | ``connectInitialBackoff`` |
  /// | `grpc.max_reconnect_backoff_ms` | ms | ``connectMaxBackoff`` |
  /// | `grpc.primary_user_agent` | string | ``userAgentPrefix`` |
  /// | `grpc.secondary_user_agent` | string | ``userAgentSuffix`` |
  /// | `grpc.default_authority` | string | ``serverAuthority`` |
  /// | `grpc.ssl_target_name_override` | string | ``hostNameOverride`` |
  /// | `grpc.enable_retries` | 0 or 1 | ``enableRetry`` |
  /// | `grpc.http2.max_frame_size` | bytes | the largest HTTP/2 frame the server may send |
  /// | `grpc.compression_enabled_algorithms_bitset` | bits: 0 identity, 1 deflate, 2 gzip | the response encodings accepted and advertised (default: all) |
  /// | `grpc.service_config` | JSON | ``serviceConfig`` |
  /// | `grpc.lb_policy_name` | `pick_first` or `round_robin` | ``loadBalancingPolicy`` |
  public var additionalChannelArgs: ChannelArgs {
    get { self.channelSettings.additionalChannelArgs }
    set { self.channelSettings.additionalChannelArgs = newValue }
  }

  /// Channel arguments by name.
  public typealias ChannelArgs = [String: GRPCChannelArgValue]

  /// The window used when ``http2TargetWindowSize`` is `0`: 8 MiB.
  public static let defaultHTTP2TargetWindowSize = 8 * 1024 * 1024

  /// The default of ``flushCoalescing``.
  public static let defaultFlushCoalescing = false

  /// Creates options with the defaults: no deadline, no metadata, no token, a 4 MiB response
  /// limit, TLS, the shared channel domain and channel id 0.
  public init() {}

  /// The channel-level options, which the public properties above read and write: what
  /// decides the channel a call runs on.
  var channelSettings: ChannelSettings {
    _read { yield self.sharedSettings.value }
    _modify {
      if !isKnownUniquelyReferenced(&self.sharedSettings) {
        self.sharedSettings = ChannelSettings.Shared(self.sharedSettings.value)
      }
      yield &self.sharedSettings.value
    }
  }

  /// The storage of ``channelSettings``, shared by copies until one of them changes a
  /// channel-level option: copying options copies one reference, and settings that were not
  /// changed are recognized by identity (``ChannelKeyCache``).
  private(set) var sharedSettings = ChannelSettings.Shared(ChannelSettings())

  /// The channel key last derived from these options, shared by their copies: a service's
  /// calls derive it once, not once per call. It holds the settings it was derived from, so a
  /// copy that changed a channel-level option derives its own.
  let channelKeyCache = ChannelKeyCache()

  /// The response size limit the call enforces: ``responseSizeLimit``, or 4 MiB when it is `0`.
  public var effectiveResponseSizeLimit: Int {
    self.responseSizeLimit == 0 ? Self.defaultResponseSizeLimit : self.responseSizeLimit
  }

  /// The response size limit used when ``responseSizeLimit`` is `0`: 4 MiB, as in gRPC core.
  public static let defaultResponseSizeLimit = 4 * 1024 * 1024

  /// The longest duration an option holds: 100 years. Longer ones, infinity included, mean
  /// "never" just as well, and every clock the call reaches (`Duration`, NIO's `TimeAmount`,
  /// `DispatchTime`) can represent this one in nanoseconds.
  public static let longestInterval: TimeInterval = 100 * 365 * 24 * 3600

  private static func clamped(_ interval: TimeInterval) -> TimeInterval {
    // NaN and negative durations are treated as "none", and ones too long for a clock as the
    // longest, rather than trapping later.
    interval.isNaN ? 0 : min(max(0, interval), Self.longestInterval)
  }
}
