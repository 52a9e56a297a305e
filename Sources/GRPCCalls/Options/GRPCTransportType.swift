/// How a channel reaches its server.
///
/// A struct over a private enum so that more transports can be added without breaking users
/// who switch over it.
public struct GRPCTransportType: Hashable, Sendable, CustomStringConvertible {
  private enum Wrapped: Hashable, Sendable {
    case tls
    case insecure
  }

  private let wrapped: Wrapped

  /// HTTP/2 over TLS, verified against the system's trust roots. The default.
  public static let tls = Self(wrapped: .tls)

  /// HTTP/2 over plaintext TCP ("h2c"), for local servers and tests.
  public static let insecure = Self(wrapped: .insecure)

  /// Whether the transport encrypts the connection.
  public var isSecure: Bool { self.wrapped == .tls }

  public var description: String {
    switch self.wrapped {
    case .tls: "tls"
    case .insecure: "insecure"
    }
  }
}
