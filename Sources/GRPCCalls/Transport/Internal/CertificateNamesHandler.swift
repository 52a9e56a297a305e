internal import NIOCore
internal import NIOSSL
internal import NIOTLS
internal import SwiftASN1
internal import X509

/// Verifies that the server's certificate is valid for the name the channel was given, and
/// turns NIOSSL's "Couldn't find <none> in certificate from peer" into an error that says which
/// names the certificate holds and which name was checked.
///
/// NIOSSL accepts a certificate whose IP address SAN matches the socket's address even when a
/// host name was given to verify (`hostNameOverride`, or a target by name): a certificate for
/// another host at the same address would pass. gRPC core and grpc-go check only the name they
/// were given, and so does this handler: when the channel verifies a host name, the certificate
/// must hold it (RFC 6125, swift-certificates' ``ServerIdentityPolicy`` with no address). Until
/// the check has passed, nothing the connection writes reaches the TLS handler: a request's
/// headers never go to a server that has not proved its name.
///
/// It sits right after the TLS handler, which reports the handshake's end (and a hostname
/// failure of its own) with the peer's certificate still there to read, on the event loop.
final class CertificateNamesHandler: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = NIOAny
  typealias OutboundIn = NIOAny

  private let tls: NIOSSLClientHandler
  /// The name the certificate was verified against (`hostNameOverride` or the authority);
  /// `nil` when the target is an address and the address itself was checked.
  private let expectedName: String?
  /// The connection's writes until the certificate's name is verified; `nil` once released.
  private var held: [(NIOAny, EventLoopPromise<Void>?)]? = []
  private var flushHeld = false

  init(after tls: NIOSSLClientHandler, expectedName: String?) {
    self.tls = tls
    self.expectedName = expectedName
  }

  /// The host name the certificate must hold; `nil` for none or an IP address, which NIOSSL
  /// matches against the socket's address.
  private var verifiedHostName: String? {
    guard let name = self.expectedName, !name.isEmpty else { return nil }
    if (try? SocketAddress(ipAddress: name, port: 0)) != nil { return nil }
    return name
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    if self.held != nil, self.verifiedHostName != nil {
      self.held?.append((data, promise))
    } else {
      context.write(data, promise: promise)
    }
  }

  func flush(context: ChannelHandlerContext) {
    if self.held != nil, self.verifiedHostName != nil {
      self.flushHeld = true
    } else {
      context.flush()
    }
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if case TLSUserEvent.handshakeCompleted = event, let name = self.verifiedHostName,
      self.held != nil
    {
      self.verify(name, context: context)
    }
    context.fireUserInboundEventTriggered(event)
  }

  /// Checks the peer's certificate for `name`, then releases the held writes or fails the
  /// connection, on the event loop.
  private func verify(_ name: String, context: ChannelHandlerContext) {
    guard let certificate = self.tls.peerCertificate else {
      // No certificate to check: BoringSSL's verification asked for none.
      self.releaseHeld(context: context)
      return
    }
    let names = Self.names(in: certificate)
    let der = try? certificate.toDERBytes()
    context.eventLoop.makeFutureWithTask {
      await Self.certificate(der: der, holds: name)
    }.assumeIsolated().whenSuccess { holds in
      guard self.held != nil else { return }
      if holds {
        self.releaseHeld(context: context)
      } else {
        let mismatch = CertificateNameMismatch(names: names, checked: name, cause: nil)
        self.failHeld(mismatch)
        context.fireErrorCaught(mismatch)
        context.close(promise: nil)
      }
    }
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    guard let failure = error as? NIOSSLExtraError, failure == .failedToValidateHostname else {
      context.fireErrorCaught(error)
      return
    }
    let checked =
      self.expectedName ?? context.channel.remoteAddress?.ipAddress ?? "the server's address"
    let names = self.tls.peerCertificate.map(Self.names(in:)) ?? []
    context.fireErrorCaught(CertificateNameMismatch(names: names, checked: checked, cause: failure))
  }

  func channelInactive(context: ChannelHandlerContext) {
    self.failHeld(ChannelError.ioOnClosedChannel)
    context.fireChannelInactive()
  }

  private func releaseHeld(context: ChannelHandlerContext) {
    let held = self.held ?? []
    self.held = nil
    for (data, promise) in held {
      context.write(data, promise: promise)
    }
    if self.flushHeld {
      self.flushHeld = false
      context.flush()
    }
  }

  private func failHeld(_ error: any Error) {
    let held = self.held ?? []
    self.held = nil
    for (_, promise) in held {
      promise?.fail(error)
    }
  }

  /// Whether the certificate in `der` is valid for `name` by its DNS names (or, with none, its
  /// common name), leaving its IP address SANs out.
  private static func certificate(der: [UInt8]?, holds name: String) async -> Bool {
    guard let der, let certificate = try? Certificate(derEncoded: der) else { return false }
    // The chain was verified by BoringSSL: trusted here as its own root, the certificate is
    // checked for the name alone.
    let critical = certificate.extensions.filter(\.critical).map(\.oid)
    var verifier = Verifier(rootCertificates: CertificateStore([certificate])) {
      NameOnlyPolicy(
        identity: ServerIdentityPolicy(serverHostname: name, serverIP: nil),
        verifyingCriticalExtensions: critical
      )
    }
    if case .validCertificate = await verifier.validate(
      leaf: certificate,
      intermediates: CertificateStore()
    ) {
      return true
    }
    return false
  }

  /// The DNS names and IP addresses in the certificate's subject alternative names.
  private static func names(in certificate: NIOSSLCertificate) -> [String] {
    certificate._subjectAlternativeNames().compactMap { name in
      switch name.nameType {
      case .dnsName:
        return name.contents.withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
      case .ipAddress:
        return name.contents.withUnsafeBufferPointer(Self.address(_:))
      default:
        return nil
      }
    }
  }

  private static func address(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
    switch bytes.count {
    case 4:
      return bytes.map(String.init).joined(separator: ".")
    case 16:
      return stride(from: 0, to: 16, by: 2)
        .map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
        .joined(separator: ":")
    default:
      return nil
    }
  }

  /// Adds the handler after the channel's TLS handler; a channel without one is left alone.
  static func install(on channel: any Channel, expectedName: String?) throws {
    let pipeline = channel.pipeline.syncOperations
    guard let tls = try? pipeline.handler(type: NIOSSLClientHandler.self) else { return }
    try pipeline.addHandler(Self(after: tls, expectedName: expectedName), position: .after(tls))
  }
}

/// The server's certificate does not name the host the channel connected to.
struct CertificateNameMismatch: Error, CustomStringConvertible {
  var names: [String]
  var checked: String
  /// NIOSSL's own failure, when it found the mismatch.
  var cause: NIOSSLExtraError?

  /// What ``GRPCError/message`` says: the names on both sides and the option that fixes it.
  var message: String {
    let held = self.names.isEmpty ? "no DNS name or address" : self.names.joined(separator: ", ")
    return "The server's certificate names \(held); connected to \(self.checked): "
      + "set hostNameOverride to a name the certificate holds"
  }

  var description: String { self.cause.map { "\(self.message) (\($0))" } ?? self.message }
}

/// swift-certificates' check of a certificate's name (RFC 6125), and nothing else: the
/// certificate's critical extensions are taken as handled, since BoringSSL verified the chain.
private struct NameOnlyPolicy: VerifierPolicy {
  var identity: ServerIdentityPolicy
  let verifyingCriticalExtensions: [ASN1ObjectIdentifier]

  mutating func chainMeetsPolicyRequirements(
    chain: UnverifiedCertificateChain
  ) -> PolicyEvaluationResult {
    self.identity.chainMeetsPolicyRequirements(chain: chain)
  }
}
