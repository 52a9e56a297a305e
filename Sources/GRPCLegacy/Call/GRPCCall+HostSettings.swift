public import GRPCCalls

/// gRPC Objective-C's per-host class methods on `GRPCCall`, as ported code calls them; each
/// forwards to ``GRPCHost``.
extension GRPCCall {
  public static func setUserAgentPrefix(_ prefix: String?, forHost host: String) throws(GRPCError) {
    try GRPCHost.setUserAgentPrefix(prefix, forHost: host)
  }

  public static func setResponseSizeLimit(_ limit: Int, forHost host: String) throws(GRPCError) {
    try GRPCHost.setResponseSizeLimit(limit, forHost: host)
  }

  public static func setDefaultCompressMethod(
    _ algorithm: GRPCCompressionAlgorithm,
    forHost host: String
  ) throws(GRPCError) {
    try GRPCHost.setDefaultCompressMethod(algorithm, forHost: host)
  }

  public static func setKeepalive(
    interval: Int,
    timeout: Int,
    forHost host: String
  ) throws(GRPCError) {
    try GRPCHost.setKeepalive(interval: interval, timeout: timeout, forHost: host)
  }

  public static func enableRetry(_ enabled: Bool, forHost host: String) throws(GRPCError) {
    try GRPCHost.enableRetry(enabled, forHost: host)
  }

  public static func setMinConnectTimeout(
    _ timeout: Int,
    initialBackoff: Int,
    maxBackoff: Int,
    forHost host: String
  ) throws(GRPCError) {
    try GRPCHost.setMinConnectTimeout(
      timeout,
      initialBackoff: initialBackoff,
      maxBackoff: maxBackoff,
      forHost: host
    )
  }

  public static func setTLSPEMRootCerts(
    _ roots: String?,
    withPrivateKey key: String? = nil,
    withCertChain chain: String? = nil,
    forHost host: String
  ) throws(GRPCError) {
    try GRPCHost.setTLSPEMRootCerts(roots, withPrivateKey: key, withCertChain: chain, forHost: host)
  }

  public static func useTestCertsPath(
    _ path: String,
    testName: String,
    forHost host: String
  ) throws(GRPCError) {
    try GRPCHost.useTestCertsPath(path, testName: testName, forHost: host)
  }

  public static func useInsecureConnections(forHost host: String) throws(GRPCError) {
    try GRPCHost.useInsecureConnections(forHost: host)
  }

  public static func setLogContext(
    _ context: [String: String],
    forHost host: String
  ) throws(GRPCError) {
    try GRPCHost.setLogContext(context, forHost: host)
  }

  public static func resetHostSettings() {
    GRPCHost.resetHostSettings()
  }

  public static func closeOpenConnections() {
    GRPCHost.closeOpenConnections()
  }
}
