internal import Foundation
internal import GRPCCallsInput
internal import GRPCCore

/// What makes two calls share a channel: the target and every channel-level option.
///
/// Two calls whose keys are equal run on the same channel, and so on the same HTTP/2 connection;
/// any difference gives a separate one. Call-level options (timeout, metadata, tokens,
/// interceptors, flow control) are not part of the key. Channel arguments are applied first, so
/// an argument and the option it sets give the same key.
///
/// The pool hashes and compares a key at each lease and release, and a call copies its key
/// several times: the fields live in one immutable storage, hashed once, so a copy is one
/// reference, and comparing the key a channel was made with to the key the next call took from
/// the same options' cache (``ChannelKeyCache``, the same storage) is one pointer comparison;
/// keys derived apart compare field by field. Fields are read as properties of the key.
@dynamicMemberLookup
package struct ChannelKey: Hashable, Sendable {
  private let storage: Storage

  /// Derives the key of a call to `host` with `options`.
  ///
  /// - Throws: ``GRPCError`` with code `INVALID_ARGUMENT` when `host` is malformed, a channel
  ///   argument is malformed, or the authority and host name override disagree.
  package init(host: String, options: GRPCCallOptions) throws(GRPCError) {
    self.storage = Storage(try Fields(host: host, options: options))
  }

  package subscript<Value>(dynamicMember field: KeyPath<Fields, Value>) -> Value {
    self.storage.fields[keyPath: field]
  }

  package static func == (lhs: ChannelKey, rhs: ChannelKey) -> Bool {
    lhs.storage === rhs.storage
      || (lhs.storage.hashCode == rhs.storage.hashCode && lhs.storage.fields == rhs.storage.fields)
  }

  package func hash(into hasher: inout Hasher) {
    hasher.combine(self.storage.hashCode)
  }

  /// The fields and their hash, computed once; never mutated.
  private final class Storage: Sendable {
    let fields: Fields
    let hashCode: Int

    init(_ fields: Fields) {
      self.fields = fields
      self.hashCode = fields.hashValue
    }
  }

  /// The error of a call that asks for Cronet, which exists on Apple platforms only.
  static let cronetUnavailable = GRPCError(
    code: .unimplemented,
    message: "The Cronet transport is not available on this platform; use .tls or .insecure"
  )
}

extension ChannelKey {
  /// What a key is made of.
  package struct Fields: Hashable, Sendable {
    /// The parsed, normalized host (`name` and `name:443` are the same target).
    let target: HostTarget
    let transportType: GRPCTransportType
    /// A registered transport; `nil` for the built-in HTTP/2 ones.
    let transport: GRPCTransportID?
    let logContext: [String: String]
    let responseSizeLimit: Int
    let userAgent: String
    let flushCoalescing: Bool
    let http2TargetWindowSize: Int
    let maxFrameSize: Int?
    /// `additionalChannelArgs` no setting maps: they change nothing but keep channels apart.
    let unknownChannelArgs: [String: GRPCChannelArgValue]
    let tls: TLSSettings?
    /// The `:authority` (and, under TLS, the verified name and SNI); `nil` derives it from the host.
    let authority: String?
    let compression: GRPCCompressionAlgorithm
    /// What the channel accepts in responses and advertises in `grpc-accept-encoding`.
    let responseCompression: [GRPCCompressionAlgorithm]
    let keepaliveInterval: TimeInterval
    let keepaliveTimeout: TimeInterval
    let keepalivePermitWithoutCalls: Bool
    let connectTimeout: TimeInterval
    /// The reconnection backoff: `connect…Backoff`, else `…RetryInterval` (0: the transport's).
    let initialBackoff: TimeInterval
    let maxBackoff: TimeInterval
    let backoffMultiplier: Double
    let enableRetry: Bool
    /// The service config the transport is given: ``GRPCCallOptions/serviceConfig`` with
    /// ``GRPCCallOptions/loadBalancingPolicy`` applied.
    let serviceConfig: ServiceConfig
    /// Seconds between resolutions of a DNS name; `0`: only on demand.
    let nameResolutionInterval: TimeInterval
    /// How many connections (each a transport of its own) the channel may open.
    let connectionsPerTarget: Int
    let channelPoolDomain: String?
    let channelId: Int

    /// The TLS settings of a secure channel.
    struct TLSSettings: Hashable, Sendable {
      var rootCertificatesPEM: String?
      /// The client certificate chain and key (mutual TLS), when both were given.
      var identity: Identity?

      struct Identity: Hashable, Sendable {
        var certificateChainPEM: String
        var privateKeyPEM: String
      }
    }

    init(host: String, options: GRPCCallOptions) throws(GRPCError) {
      let (options, extras) = try ChannelArgs.apply(to: options)
      self.target = try HostTarget.parsed(host)
      switch options.transport {
      case GRPCTransportID.secure?:
        self.transportType = .tls
        self.transport = nil
      case GRPCTransportID.insecure?:
        self.transportType = .insecure
        self.transport = nil
      case let id:
        self.transportType = options.transportType
        self.transport = id
      }
      if self.transport == nil, self.transportType == .cronet {
        throw ChannelKey.cronetUnavailable
      }
      self.logContext = options.logContext
      self.responseSizeLimit = options.effectiveResponseSizeLimit
      self.userAgent = UserAgent.value(for: options)
      self.flushCoalescing = options.flushCoalescing
      self.http2TargetWindowSize =
        options.http2TargetWindowSize == 0
        ? GRPCCallOptions.defaultHTTP2TargetWindowSize : options.http2TargetWindowSize
      self.maxFrameSize = extras.maxFrameSize
      self.unknownChannelArgs = extras.unknown
      if self.transportType.isSecure {
        let identity = options.pemCertificateChain.flatMap { chain in
          options.pemPrivateKey.map {
            TLSSettings.Identity(certificateChainPEM: chain, privateKeyPEM: $0)
          }
        }
        self.tls = TLSSettings(rootCertificatesPEM: options.pemRootCertificates, identity: identity)
        if let authority = options.serverAuthority, let override = options.hostNameOverride,
          authority != override
        {
          throw GRPCError(
            code: .invalidArgument,
            message: "serverAuthority '\(authority)' and hostNameOverride '\(override)' differ: "
              + "under TLS the transport sends one name as the authority and verifies the certificate against it"
          )
        }
        self.authority = options.serverAuthority ?? options.hostNameOverride
      } else {
        self.tls = nil
        self.authority = options.serverAuthority
      }
      self.compression = options.compressionAlgorithm
      self.responseCompression = extras.responseCompression
      self.keepaliveInterval = options.keepaliveInterval
      self.keepaliveTimeout = options.keepaliveTimeout
      self.keepalivePermitWithoutCalls = options.keepalivePermitWithoutCalls
      self.connectTimeout = options.connectMinTimeout
      self.initialBackoff =
        options.connectInitialBackoff > 0 ? options.connectInitialBackoff : options.minRetryInterval
      self.maxBackoff =
        options.connectMaxBackoff > 0 ? options.connectMaxBackoff : options.maxRetryInterval
      self.backoffMultiplier = options.retryFactor
      self.enableRetry = options.enableRetry
      var serviceConfig = options.serviceConfig ?? ServiceConfig()
      if let policy = options.loadBalancingPolicy {
        serviceConfig.loadBalancingConfig = [policy.config]
      }
      self.serviceConfig = serviceConfig
      self.nameResolutionInterval = options.nameResolutionInterval
      self.connectionsPerTarget = options.connectionsPerTarget
      self.channelPoolDomain = options.channelPoolDomain
      self.channelId = options.channelId
    }
  }
}
