internal import NIOCore
internal import NIOSSL

/// Turns NIOSSL's "Couldn't find <none> in certificate from peer" into an error that says which
/// names the server's certificate holds and which name was checked.
///
/// It sits right after the TLS handler, which fires the hostname failure once the handshake has
/// completed: the peer's certificate is still there to read, on the event loop.
final class CertificateNamesHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = NIOAny

  private let tls: NIOSSLClientHandler
  /// The name the certificate was verified against (`hostNameOverride` or the authority);
  /// `nil` when the target is an address and the address itself was checked.
  private let expectedName: String?

  init(after tls: NIOSSLClientHandler, expectedName: String?) {
    self.tls = tls
    self.expectedName = expectedName
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    guard let failure = error as? NIOSSLExtraError, failure == .failedToValidateHostname else {
      context.fireErrorCaught(error)
      return
    }
    let checked = self.expectedName ?? context.channel.remoteAddress?.ipAddress ?? "the server's address"
    let names = self.tls.peerCertificate.map(Self.names(in:)) ?? []
    context.fireErrorCaught(CertificateNameMismatch(names: names, checked: checked, cause: failure))
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
  var cause: NIOSSLExtraError

  /// What ``GRPCError/message`` says: the names on both sides and the option that fixes it.
  var message: String {
    let held = self.names.isEmpty ? "no DNS name or address" : self.names.joined(separator: ", ")
    return "The server's certificate names \(held); connected to \(self.checked): "
      + "set hostNameOverride to a name the certificate holds"
  }

  var description: String { "\(self.message) (\(self.cause))" }
}
