internal import GRPCCore
internal import NIOSSL

/// Says which TLS option is wrong when the transport cannot build its TLS context: the core
/// reports "Couldn't create SSL context, check your TLS configuration" with BoringSSL's
/// failure as the cause, which names neither the option nor the fix.
enum TLSConfigurationFailure {
  /// The error a channel fails with when `error` came from loading the TLS settings of `key`;
  /// `nil` when it did not.
  static func error(for error: any Error, tls: ChannelKey.Fields.TLSSettings?) -> GRPCError? {
    guard let tls, let failure = Self.sslError(in: error) else { return nil }
    let message: String
    switch failure {
    case .failedToLoadCertificate:
      if let roots = tls.rootCertificatesPEM, !Self.parses(certificates: roots) {
        message = "pemRootCertificates holds no valid PEM certificate: check the text"
      } else if let chain = tls.identity?.certificateChainPEM, !Self.parses(certificates: chain) {
        message = "pemCertificateChain holds no valid PEM certificate: check the text"
      } else {
        message = "A certificate in pemRootCertificates or pemCertificateChain could not be loaded"
      }
    case .failedToLoadPrivateKey:
      if let key = tls.identity?.privateKeyPEM,
        (try? NIOSSLPrivateKey(bytes: Array(key.utf8), format: .pem)) != nil
      {
        message =
          "pemPrivateKey does not match the certificate in pemCertificateChain: give the key of that certificate"
      } else {
        message = "pemPrivateKey is not a valid PEM private key (PKCS#8, RSA or EC): check the text"
      }
    default:
      return nil
    }
    return GRPCError(code: .invalidArgument, message: message, cause: error)
  }

  private static func parses(certificates pem: String) -> Bool {
    ((try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))) ?? []).isEmpty == false
  }

  /// The NIOSSL error somewhere in `error`'s chain of causes.
  private static func sslError(in error: any Error) -> NIOSSLError? {
    var current: (any Error)? = error
    for _ in 0 ..< 8 {
      switch current {
      case let ssl as NIOSSLError: return ssl
      case let runtime as RuntimeError: current = runtime.cause
      case let rpc as RPCError: current = rpc.cause
      default: return nil
      }
    }
    return nil
  }
}
