internal import Foundation
public import GRPCCalls
internal import GRPCCore

/// gRPC Objective-C's per-host class setters (`+[GRPCCall setUserAgentPrefix:forHost:]` and
/// friends). Each validates its input and throws `INVALID_ARGUMENT` saying what is wrong, and
/// affects only v1 calls to that host made without call options, from their next start.
extension GRPCHost {
  /// Put in front of the library's own token in the `user-agent` of calls to `host`.
  public static func setUserAgentPrefix(_ prefix: String?, forHost host: String) throws(GRPCError) {
    try Self.host(withAddress: host).updateSettings { $0.userAgentPrefix = prefix }
  }

  /// Put after the library's own token in the `user-agent` of calls to `host`.
  public static func setUserAgentSuffix(_ suffix: String?, forHost host: String) throws(GRPCError) {
    try Self.host(withAddress: host).updateSettings { $0.userAgentSuffix = suffix }
  }

  /// The largest response message calls to `host` accept, in bytes.
  public static func setResponseSizeLimit(_ limit: Int, forHost host: String) throws(GRPCError) {
    try Self.check(limit >= 0, "the response size limit must not be negative, not \(limit)")
    try Self.host(withAddress: host).updateSettings { $0.responseSizeLimit = limit }
  }

  /// How calls to `host` compress their requests (`+setDefaultCompressMethod:forhost:`).
  public static func setDefaultCompressMethod(
    _ algorithm: GRPCCompressionAlgorithm,
    forHost host: String
  ) throws(GRPCError) {
    try Self.host(withAddress: host).updateSettings { $0.compressionAlgorithm = algorithm }
  }

  /// HTTP/2 keepalive pings for `host`'s connections, in milliseconds (`0` turns them off).
  public static func setKeepalive(
    interval: Int,
    timeout: Int,
    forHost host: String
  ) throws(GRPCError) {
    try Self.check(
      interval >= 0 && timeout >= 0,
      "keepalive interval and timeout must not be negative, not \(interval) and \(timeout) ms"
    )
    try Self.host(withAddress: host).updateSettings {
      $0.keepaliveIntervalMs = interval
      $0.keepaliveTimeoutMs = timeout
    }
  }

  /// Whether calls to `host` follow their retry policy (on by default).
  public static func enableRetry(_ enabled: Bool, forHost host: String) throws(GRPCError) {
    try Self.host(withAddress: host).updateSettings { $0.retryEnabled = enabled }
  }

  /// The bound of each connection attempt and the reconnection backoff for `host`, in
  /// milliseconds (`0` keeps a default).
  public static func setMinConnectTimeout(
    _ timeout: Int,
    initialBackoff: Int,
    maxBackoff: Int,
    forHost host: String
  ) throws(GRPCError) {
    try Self.check(
      timeout >= 0 && initialBackoff >= 0 && maxBackoff >= 0,
      "connect timeout and backoffs must not be negative, not \(timeout), \(initialBackoff) and \(maxBackoff) ms"
    )
    try Self.host(withAddress: host).updateSettings {
      $0.minConnectTimeoutMs = timeout
      $0.initialConnectBackoffMs = initialBackoff
      $0.maxConnectBackoffMs = maxBackoff
    }
  }

  /// TLS for `host`: the roots its certificate must chain to (`nil`: the system's) and, for
  /// mutual TLS, the client's key and certificate chain, all PEM.
  ///
  /// - Throws: `INVALID_ARGUMENT` when only one of the key and the chain is given.
  public static func setTLSPEMRootCerts(
    _ roots: String?,
    withPrivateKey key: String? = nil,
    withCertChain chain: String? = nil,
    forHost host: String
  ) throws(GRPCError) {
    try Self.check(
      (key == nil) == (chain == nil),
      "a client private key and certificate chain go together: give both or neither"
    )
    try Self.host(withAddress: host).updateSettings {
      $0.pemRootCertificates = roots
      $0.pemPrivateKey = key
      $0.pemCertificateChain = chain
      $0.insecure = false
    }
  }

  /// Trusts the PEM roots in the file at `path` for `host` and verifies its certificate against
  /// `testName` (gRPC Objective-C's `+useTestCertsPath:testName:forHost:`).
  ///
  /// - Throws: `INVALID_ARGUMENT` when the file cannot be read.
  public static func useTestCertsPath(
    _ path: String,
    testName: String,
    forHost host: String
  ) throws(GRPCError) {
    let roots: String
    do {
      roots = try String(contentsOfFile: path, encoding: .utf8)
    } catch {
      throw GRPCError(
        code: .invalidArgument,
        message: "Cannot read the test certificates at '\(path)': \(error.localizedDescription)"
      )
    }
    try Self.host(withAddress: host).updateSettings {
      $0.pemRootCertificates = roots
      $0.hostNameOverride = testName
      $0.insecure = false
    }
  }

  /// Calls to `host` use plaintext instead of TLS.
  public static func useInsecureConnections(forHost host: String) throws(GRPCError) {
    try Self.host(withAddress: host).updateSettings { $0.insecure = true }
  }

  /// Metadata added to the library's log records about `host`'s channels.
  public static func setLogContext(
    _ context: [String: String],
    forHost host: String
  ) throws(GRPCError) {
    try Self.host(withAddress: host).updateSettings { $0.logContext = context }
  }

  private static func check(
    _ condition: Bool,
    _ message: @autoclosure () -> String
  ) throws(GRPCError) {
    guard condition else {
      throw GRPCError(code: .invalidArgument, message: "Invalid host setting: \(message())")
    }
  }
}
