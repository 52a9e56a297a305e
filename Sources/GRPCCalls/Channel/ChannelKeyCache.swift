
/// The channel key last derived from one set of options (``GRPCCallOptions/channelKeyCache``).
///
/// Options hold one and copies share it; setting any channel-level option gives the options a
/// fresh one, so a key found here was derived from exactly the channel-level options of every
/// value that still holds this cache. Deriving a key parses the host, applies the channel
/// arguments and builds the user agent: work that belongs to the channel, not to each call.
final class ChannelKeyCache: Sendable {
  private let entry = LockedValue<(host: String, key: ChannelKey)?>(nil)

  /// The key of a call to `host` with `options`, derived once per host.
  func key(host: String, options: GRPCCallOptions) throws(GRPCError) -> ChannelKey {
    if let cached = self.entry.withLock({ $0 }), cached.host == host {
      return cached.key
    }
    let key = try ChannelKey(host: host, options: options)
    self.entry.withLock { $0 = (host, key) }
    return key
  }
}
