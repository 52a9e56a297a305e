public import Foundation
public import GRPCCalls

/// Attaches an access token from an async source to every call, refreshing it as it expires
/// and when the server rejects it.
///
/// All calls that share one factory share one token:
/// - The source is asked at most once at a time. Calls that need a token while a fetch is under
///   way wait for that fetch (50 calls at once on an empty cache cause one fetch).
/// - The token is kept until ``Config-swift.struct/refreshMargin`` before its expiry, then
///   fetched anew by the next call.
/// - A call the server fails with `UNAUTHENTICATED` (16) invalidates the token it carried. If
///   the call is idempotent or cacheable (`GRPCCallSafety`) and nothing of the response has
///   reached the application yet, it is retried once with a fresh token.
/// - A source that throws fails the call with `UNAUTHENTICATED` and the source's message,
///   without opening a connection.
///
/// ```swift
/// let auth = GRPCTokenRefreshInterceptorFactory {
///   let grant = try await oauth.clientCredentials()  // your identity provider
///   return GRPCAccessToken(grant.accessToken, expiresIn: grant.expiresIn)
/// }
/// var options = GRPCCallOptions()
/// options.interceptorFactories = [auth]
/// ```
///
/// The interceptor holds a call's request messages until the token is there; to replay them in
/// a retry, it keeps those of idempotent and cacheable calls until the call closes.
public struct GRPCTokenRefreshInterceptorFactory: GRPCInterceptorFactory {
  /// How tokens are attached and refreshed.
  public struct Config: Sendable {
    /// How long before its expiry a token is no longer used: a call must not set off with a
    /// token that expires on the way.
    public var refreshMargin: TimeInterval
    /// Whether an idempotent or cacheable call that fails with `UNAUTHENTICATED` is retried once
    /// with a fresh token: after the delay the server asked for, if it did
    /// (`GRPCError.serverRetryDelay`), else at once. A delay that would pass the
    /// call's deadline means no retry: the call fails with the server's status.
    public var retriesUnauthenticated: Bool
    /// The metadata key the token goes in.
    public var metadataKey: String
    /// What precedes the token in the value, followed by a space; empty for the bare token.
    public var scheme: String

    /// A 30-second margin; one retry; `authorization: Bearer <token>`.
    public static var defaults: Config {
      Config(
        refreshMargin: 30,
        retriesUnauthenticated: true,
        metadataKey: "authorization",
        scheme: "Bearer"
      )
    }
  }

  public let config: Config
  let cache: AccessTokenCache

  /// - Parameters:
  ///   - config: How tokens are attached and refreshed.
  ///   - now: The clock expiries are compared with; tests pass their own.
  ///   - source: Fetches a new token; it may throw to fail the calls waiting for it.
  public init(
    config: Config = .defaults,
    now: @escaping @Sendable () -> Date = { Date() },
    source: @escaping @Sendable () async throws -> GRPCAccessToken
  ) {
    self.config = config
    self.cache = AccessTokenCache(source: source, refreshMargin: config.refreshMargin, now: now)
  }

  public func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor? {
    GRPCTokenRefreshInterceptor(manager: manager, config: self.config, cache: self.cache)
  }
}
