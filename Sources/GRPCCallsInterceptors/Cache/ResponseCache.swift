internal import Foundation
internal import GRPCCalls
internal import GRPCCore

/// The responses a ``GRPCResponseCacheInterceptorFactory`` keeps: in memory, bounded in entries
/// and bytes, the least recently used evicted first.
final class ResponseCache: Sendable {
  /// What identifies a response: the method, the serialized request and the chosen metadata.
  struct Key: Hashable, Sendable {
    var path: String
    var request: Data
    var metadata: [String]
  }

  /// A cached response, answered as the server gave it.
  struct Entry: Sendable {
    var headers: Metadata
    var message: any Sendable
    var trailers: Metadata
    var bytes: Int
    var expiresAt: Date
  }

  private struct State {
    var entries: [Key: (entry: Entry, lastUse: UInt64)] = [:]
    var bytes = 0
    var clock: UInt64 = 0

    mutating func remove(_ key: Key) {
      if let removed = self.entries.removeValue(forKey: key) {
        self.bytes -= removed.entry.bytes
      }
    }
  }

  private let state = LockedValue(State())
  private let maxEntries: Int
  private let maxBytes: Int

  init(maxEntries: Int, maxBytes: Int) {
    self.maxEntries = maxEntries
    self.maxBytes = maxBytes
  }

  /// The fresh entry for `key`, if any; an expired one is dropped.
  func entry(for key: Key, at now: Date) -> Entry? {
    self.state.withLock { state in
      guard let found = state.entries[key] else { return nil }
      guard now < found.entry.expiresAt else {
        state.remove(key)
        return nil
      }
      state.clock += 1
      state.entries[key]?.lastUse = state.clock
      return found.entry
    }
  }

  /// Keeps `entry`, evicting the least recently used entries until both bounds hold. An entry
  /// larger than the whole cache is not kept.
  func store(_ entry: Entry, for key: Key) {
    guard entry.bytes <= self.maxBytes, self.maxEntries > 0 else { return }
    self.state.withLock { state in
      state.remove(key)
      while state.entries.count >= self.maxEntries || state.bytes + entry.bytes > self.maxBytes,
        let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
      {
        state.remove(oldest)
      }
      state.clock += 1
      state.entries[key] = (entry, state.clock)
      state.bytes += entry.bytes
    }
  }

  /// How many responses are kept.
  var count: Int { self.state.withLock { $0.entries.count } }

  /// Forgets every response.
  func removeAll() {
    self.state.withLock { $0 = State(clock: $0.clock) }
  }
}

/// How long a response may be reused, from its `cache-control` header (HTTP's meaning).
enum CacheControl {
  /// The freshness lifetime: `max-age`'s seconds; `0` for `no-store` or `no-cache`; `nil`
  /// when the header says neither.
  static func lifetime(headers: Metadata, trailers: Metadata) -> TimeInterval? {
    let values =
      Array(headers[stringValues: "cache-control"]) + Array(trailers[stringValues: "cache-control"])
    var maxAge: TimeInterval?
    for directive in values.flatMap({ $0.split(separator: ",") }) {
      let text = directive.trimmingCharacters(in: .whitespaces).lowercased()
      if text == "no-store" || text == "no-cache" {
        return 0
      }
      if text.hasPrefix("max-age="), let seconds = TimeInterval(text.dropFirst("max-age=".count)) {
        maxAge = max(0, seconds)
      }
    }
    return maxAge
  }
}
