public import Foundation
public import GRPCCalls

/// Answers repeated unary calls from memory: a cacheable call whose request was answered
/// before, and whose response is still fresh, gets the same headers, message and trailers
/// without a connection.
///
/// A call is looked up when its method is marked `GRPCCallSafety.cacheable` or its path is in
/// ``Config-swift.struct/cachedPaths``, and it sends exactly one request message. The key is the
/// path, the serialized request and the values of ``Config-swift.struct/keyMetadata`` (the
/// `authorization` by default, so users never see each other's responses). Only successful
/// responses with one message are kept, for as long as their `cache-control: max-age` says
/// (none for `no-store` or `no-cache`), or ``Config-swift.struct/defaultLifetime`` when the
/// server says nothing. The cache holds at most ``Config-swift.struct/maxEntries`` responses and
/// ``Config-swift.struct/maxBytes`` bytes, and evicts the least recently used first.
///
/// ```swift
/// let cache = GRPCResponseCacheInterceptorFactory()
/// var options = GRPCCallOptions()
/// options.interceptorFactories = [cache]
/// // Two calls of a cacheable method with the same request: one reaches the server.
/// ```
public struct GRPCResponseCacheInterceptorFactory: GRPCInterceptorFactory {
  /// What is cached and how much.
  public struct Config: Sendable {
    /// Paths (`/package.Service/Method`) cached though not marked cacheable.
    public var cachedPaths: Set<String>
    /// How long a response without `cache-control` stays fresh; `nil`: it is not cached.
    public var defaultLifetime: TimeInterval?
    /// Request metadata keys whose values are part of the key.
    public var keyMetadata: [String]
    /// At most this many responses are kept.
    public var maxEntries: Int
    /// At most this many bytes of response messages are kept.
    public var maxBytes: Int
    /// Whether the interceptor runs inline (no hop to a queue of its own).
    public var executesInline: Bool

    /// Cacheable methods only; lifetimes from `cache-control` only; keyed by `authorization`;
    /// 256 responses, 4 MiB; inline.
    public static var defaults: Config {
      Config(
        cachedPaths: [],
        defaultLifetime: nil,
        keyMetadata: ["authorization"],
        maxEntries: 256,
        maxBytes: 4 << 20,
        executesInline: true
      )
    }
  }

  public let config: Config
  let cache: ResponseCache
  let now: @Sendable () -> Date

  /// - Parameters:
  ///   - config: What is cached and how much.
  ///   - now: The clock lifetimes are measured with; tests pass their own.
  public init(config: Config = .defaults, now: @escaping @Sendable () -> Date = { Date() }) {
    self.config = config
    self.cache = ResponseCache(maxEntries: config.maxEntries, maxBytes: config.maxBytes)
    self.now = now
  }

  /// How many responses the cache holds.
  public var count: Int { self.cache.count }

  /// Forgets every cached response (a user signed out, data changed).
  public func removeAll() {
    self.cache.removeAll()
  }

  public func makeInterceptor(manager: GRPCInterceptorManager) -> GRPCInterceptor? {
    GRPCResponseCacheInterceptor(manager: manager, factory: self)
  }
}
