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
      let reasons = CoreFailure.tlsReasons(errors)
      if CoreFailure.plaintextServer(reasons) {
        return Self.plaintextServer
      }
      return "The TLS handshake with the server failed: \(reasons.joined(separator: ", "))"
    default:
      return "The TLS handshake with the server failed: \(error)"
    }
  }
}
