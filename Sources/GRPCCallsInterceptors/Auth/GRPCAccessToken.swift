public import Foundation

/// An access token and the time it stops being valid, as a token source hands it to
/// ``GRPCTokenRefreshInterceptorFactory``.
public struct GRPCAccessToken: Sendable, Hashable {
  /// The token, sent as `authorization: Bearer <value>`.
  public var value: String
  /// When the token expires; `nil` for a token that is valid until the server rejects it.
  public var expiresAt: Date?

  /// - Parameters:
  ///   - value: The token.
  ///   - expiresAt: When it expires; `nil` if it does not.
  public init(_ value: String, expiresAt: Date? = nil) {
    self.value = value
    self.expiresAt = expiresAt
  }

  /// - Parameters:
  ///   - value: The token.
  ///   - lifetime: How long it is valid from now, as an OAuth server's `expires_in` says.
  public init(_ value: String, expiresIn lifetime: TimeInterval) {
    self.init(value, expiresAt: Date(timeIntervalSinceNow: lifetime))
  }
}
