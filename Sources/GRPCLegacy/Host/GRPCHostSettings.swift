public import GRPCCalls

/// What gRPC Objective-C's per-host class setters stored for one host (`GRPCHost`), in its
/// units: durations in milliseconds. ``callOptions`` turns them into the options of a call.
public struct GRPCHostSettings: Sendable, Equatable {
  public var userAgentPrefix: String?
  public var userAgentSuffix: String?
  /// The largest response message; `nil` keeps the library's 4 MiB.
  public var responseSizeLimit: Int?
  public var compressionAlgorithm: GRPCCompressionAlgorithm = .none
  /// HTTP/2 pings while calls run, in milliseconds; `0` sends none.
  public var keepaliveIntervalMs = 0
  /// How long to wait for a ping's answer, in milliseconds; `0` means 20 s.
  public var keepaliveTimeoutMs = 0
  /// Whether calls follow their retry policy; on by default.
  public var retryEnabled = true
  /// Connection attempt bound and reconnection backoff, in milliseconds; `0` keeps the defaults.
  public var minConnectTimeoutMs = 0
  public var initialConnectBackoffMs = 0
  public var maxConnectBackoffMs = 0
  /// PEM roots the server's certificate must chain to; `nil` trusts the system's.
  public var pemRootCertificates: String?
  /// The client's key and chain for mutual TLS (both, or neither).
  public var pemPrivateKey: String?
  public var pemCertificateChain: String?
  /// The name the certificate is verified against (and sent as SNI and `:authority`).
  public var hostNameOverride: String?
  /// Plaintext instead of TLS (`useInsecureConnections(forHost:)`).
  public var insecure = false
  /// Added to the library's log records about the host's channels.
  public var logContext: [String: String] = [:]

  public init() {}

  /// The options of a call to the host: the library's defaults with these settings applied,
  /// milliseconds turned into seconds.
  public var callOptions: GRPCCallOptions {
    var options = GRPCCallOptions()
    options.userAgentPrefix = self.userAgentPrefix
    options.userAgentSuffix = self.userAgentSuffix
    if let limit = self.responseSizeLimit { options.responseSizeLimit = limit }
    options.compressionAlgorithm = self.compressionAlgorithm
    options.keepaliveInterval = Self.seconds(self.keepaliveIntervalMs)
    options.keepaliveTimeout = Self.seconds(self.keepaliveTimeoutMs)
    options.enableRetry = self.retryEnabled
    options.connectMinTimeout = Self.seconds(self.minConnectTimeoutMs)
    options.connectInitialBackoff = Self.seconds(self.initialConnectBackoffMs)
    options.connectMaxBackoff = Self.seconds(self.maxConnectBackoffMs)
    options.pemRootCertificates = self.pemRootCertificates
    options.pemPrivateKey = self.pemPrivateKey
    options.pemCertificateChain = self.pemCertificateChain
    options.hostNameOverride = self.hostNameOverride
    options.transportType = self.insecure ? .insecure : .tls
    options.logContext = self.logContext
    return options
  }

  private static func seconds(_ milliseconds: Int) -> Double {
    Double(milliseconds) / 1000
  }
}
