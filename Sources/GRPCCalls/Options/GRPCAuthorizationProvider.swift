/// Supplies the access token a call sends as `authorization: Bearer <token>`.
///
/// The library asks once per call, when the call starts and before it opens a stream. Return
/// `nil` to send the call without authorization. A thrown error fails the call with
/// `UNAUTHENTICATED` (16), keeping the error as its ``GRPCError/cause``.
///
/// It may be asked on the event loop that runs the channel's connections: await what takes
/// time (a network fetch, an actor) rather than blocking the thread.
///
/// ```swift
/// struct KeychainTokens: GRPCAuthorizationProvider {
///   func accessToken() async throws -> String? {
///     try await TokenStore.shared.freshToken()
///   }
/// }
///
/// var options = GRPCCallOptions()
/// options.authTokenProvider = KeychainTokens()
/// ```
public protocol GRPCAuthorizationProvider: Sendable {
  /// Returns the token for the call about to start, or `nil` for none.
  func accessToken() async throws -> String?
}
