/// The channel keys last derived from copies of one set of options
/// (``GRPCCallOptions/channelKeyCache``).
///
/// Options hold one and their copies share it. Each entry keeps the host and the channel
/// settings its key was derived from, and is used only for a call with equal ones, so a copy
/// that changed a channel-level option never gets another's key. Deriving a key parses the
/// host, applies the channel arguments and builds the user agent: work that belongs to the
/// channel, not to each call. A few entries, the most recent first, serve a service whose calls
/// alternate between its options and a variant of them; when they are full, the least recently
/// used is dropped.
final class ChannelKeyCache: Sendable {
  private struct Entry {
    var host: String
    var settings: ChannelSettings.Shared
    var key: ChannelKey
  }

  /// The most entries kept.
  private static let capacity = 4

  private let entries = LockedValue<[Entry]>([])

  /// The key of a call to `host` with `options`, derived once per host and settings.
  func key(host: String, options: GRPCCallOptions) throws(GRPCError) -> ChannelKey {
    let settings = options.sharedSettings
    if let cached = self.entries.withLock({ Self.take(host, settings, from: &$0) }) {
      return cached
    }
    let derived = try ChannelKey(host: host, options: options)
    return self.entries.withLock { entries in
      // Another call may have derived it meanwhile: every call takes that one, so that all
      // compare with their channel's key by identity.
      if let first = Self.take(host, settings, from: &entries) { return first }
      entries.insert(Entry(host: host, settings: settings, key: derived), at: 0)
      if entries.count > Self.capacity { entries.removeLast() }
      return derived
    }
  }

  /// The key of the entry for `host` and `settings`, which moves to the front; `nil` if none.
  private static func take(
    _ host: String,
    _ settings: ChannelSettings.Shared,
    from entries: inout [Entry]
  ) -> ChannelKey? {
    guard
      let index = entries.firstIndex(where: {
        $0.host == host && $0.settings.holdsSameSettings(as: settings)
      })
    else {
      return nil
    }
    if index > 0 { entries.insert(entries.remove(at: index), at: 0) }
    return entries[0].key
  }
}
