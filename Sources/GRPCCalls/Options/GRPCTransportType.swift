/// How a channel reaches its server.
///
/// A struct over a private enum so that more transports can be added without breaking users
/// who switch over it.
public struct GRPCTransportType: Hashable, Sendable, CustomStringConvertible {
  private enum Wrapped: Hashable, Sendable {
    case tls
    case insecure
    case cronet
  }

  private let wrapped: Wrapped

  /// HTTP/2 over TLS, verified against the system's trust roots. The default.
  public static let tls = Self(wrapped: .tls)

  /// HTTP/2 over plaintext TCP ("h2c"), for local servers and tests.
  public static let insecure = Self(wrapped: .insecure)

  /// Cronet (Chromium's network stack), as in gRPC Objective-C. It exists on Apple platforms
  /// only: a call that asks for it here fails with `UNIMPLEMENTED`.
  public static let cronet = Self(wrapped: .cronet)

  /// Whether the transport encrypts the connection.
  public var isSecure: Bool { self.wrapped != .insecure }

  public var description: String {
    switch self.wrapped {
    case .tls: "tls"
    case .insecure: "insecure"
    case .cronet: "cronet"
    }
  }
}
