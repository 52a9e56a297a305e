internal import Foundation
internal import NIOSSL

/// What a failed TLS handshake's ``GRPCError/message`` says: the commonest mistakes with the
/// option that fixes them, and otherwise BoringSSL's reason without its source paths (the full
/// error stays in ``GRPCError/cause``).
enum TLSFailure {
  static let plaintextServer =
    "The server does not speak TLS: set transportType to .insecure to call a plaintext server"

  static func message(for error: any Error) -> String {
    switch error {
    case let mismatch as CertificateNameMismatch:
      return mismatch.message
    case NIOSSLError.handshakeFailed(.sslError(let errors)):
      var reasons: [String] = []
      for reason in errors.map(Self.reason(_:)) where !reasons.contains(reason) {
        reasons.append(reason)
      }
      // A plaintext HTTP/2 server answers the ClientHello with frames BoringSSL cannot read as
      // a TLS record.
      if reasons.contains("WRONG_VERSION_NUMBER") {
        return Self.plaintextServer
      }
      return "The TLS handshake with the server failed: \(reasons.joined(separator: ", "))"
    default:
      return "The TLS handshake with the server failed: \(error)"
    }
  }

  /// `WRONG_VERSION_NUMBER` from "Error: 268435703 error:100000f7:SSL routines:
  /// OPENSSL_internal:WRONG_VERSION_NUMBER at /build/…/tls_record.cc:231".
  private static func reason(_ error: BoringSSLInternalError) -> String {
    var text = Substring(error.description)
    if let at = text.range(of: " at /") {
      text = text[..<at.lowerBound]
    }
    return String(text.split(separator: ":").last ?? text).trimmingCharacters(in: .whitespaces)
  }
}
