import Crypto
import Foundation
import GRPCCallsInterop
import SwiftASN1
import X509

/// A certificate authority and the certificates it signs, made fresh for each test run.
struct TestCertificates: Sendable {
  struct Identity: Sendable {
    var certificatePEM: String
    var privateKeyPEM: String
  }

  /// The name in the server certificate (the only one: no IP address, no "localhost").
  static let serverName = "server.grpc-calls.test"

  let caPEM: String
  let server: Identity
  /// A server certificate that names ``serverName`` and the address 127.0.0.1 (an IP SAN), as
  /// gRPC's interop test certificate does.
  let serverWithAddress: Identity
  let client: Identity

  /// A CA that nothing was signed with: trusting it alone must fail verification.
  let otherCAPEM: String

  init() throws {
    let caKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
    let ca = try Self.authority(key: caKey, name: "grpc-calls test CA")
    self.caPEM = try ca.serializeAsPEM().pemString
    self.server = try Self.leaf(
      name: Self.serverName,
      usage: .serverAuth,
      issuer: ca,
      issuerKey: caKey
    )
    self.serverWithAddress = try Self.leaf(
      name: Self.serverName,
      address: [127, 0, 0, 1],
      usage: .serverAuth,
      issuer: ca,
      issuerKey: caKey
    )
    self.client = try Self.leaf(
      name: "client.grpc-calls.test",
      usage: .clientAuth,
      issuer: ca,
      issuerKey: caKey
    )
    let otherKey = Certificate.PrivateKey(P256.Signing.PrivateKey())
    self.otherCAPEM = try Self.authority(key: otherKey, name: "unrelated CA").serializeAsPEM()
      .pemString
  }

  /// The server's identity (``serverWithAddress`` when `withAddress`), requiring client
  /// certificates signed by this CA when `mutual`.
  func serverTLS(mutual: Bool = false, withAddress: Bool = false) -> InteropServer.TLSIdentity {
    let server = withAddress ? self.serverWithAddress : self.server
    return InteropServer.TLSIdentity(
      certificateChainPEM: server.certificatePEM,
      privateKeyPEM: server.privateKeyPEM,
      clientTrustRootsPEM: mutual ? self.caPEM : nil
    )
  }

  private static func authority(key: Certificate.PrivateKey, name: String) throws -> Certificate {
    let subject = try DistinguishedName { CommonName(name) }
    return try Certificate(
      version: .v3,
      serialNumber: Certificate.SerialNumber(),
      publicKey: key.publicKey,
      notValidBefore: Date() - 3600,
      notValidAfter: Date() + 86400,
      issuer: subject,
      subject: subject,
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
        Critical(KeyUsage(keyCertSign: true, cRLSign: true))
      },
      issuerPrivateKey: key
    )
  }

  private static func leaf(
    name: String,
    address: [UInt8]? = nil,
    usage: ExtendedKeyUsage.Usage,
    issuer: Certificate,
    issuerKey: Certificate.PrivateKey
  ) throws -> Identity {
    let key = Certificate.PrivateKey(P256.Signing.PrivateKey())
    let certificate = try Certificate(
      version: .v3,
      serialNumber: Certificate.SerialNumber(),
      publicKey: key.publicKey,
      notValidBefore: Date() - 3600,
      notValidAfter: Date() + 86400,
      issuer: issuer.subject,
      subject: try DistinguishedName { CommonName(name) },
      signatureAlgorithm: .ecdsaWithSHA256,
      extensions: try Certificate.Extensions {
        Critical(BasicConstraints.notCertificateAuthority)
        Critical(KeyUsage(digitalSignature: true))
        try ExtendedKeyUsage([usage])
        SubjectAlternativeNames(
          [.dnsName(name)]
            + (address.map { [.ipAddress(ASN1OctetString(contentBytes: $0[...]))] } ?? [])
        )
      },
      issuerPrivateKey: issuerKey
    )
    return Identity(
      certificatePEM: try certificate.serializeAsPEM().pemString,
      privateKeyPEM: try key.serializeAsPEM().pemString
    )
  }
}
