/// The pool's bookkeeping: which channel serves each key and how many calls it runs.
///
/// A channel whose call count drops to zero gets a new idle generation; the idle timer expires
/// it only if the generation is unchanged when the timer fires (no call came in between).
/// Channels are matched by identity, so a lease from before ``removeAll()`` cannot touch the
/// channel that replaced its own.
struct PoolState {
  private struct Entry {
    var channel: GRPCChannel
    var activeCalls: Int
    var idleGeneration: Int
  }

  private var entries: [ChannelKey: Entry] = [:]

  var count: Int { self.entries.count }

  mutating func checkOut(_ key: ChannelKey) -> GRPCChannel? {
    guard var entry = self.entries[key] else { return nil }
    entry.activeCalls += 1
    entry.idleGeneration += 1
    self.entries[key] = entry
    return entry.channel
  }

  /// Checks out the channel for `fresh.key`, inserting `fresh` if there is none.
  mutating func checkOutOrInsert(_ fresh: GRPCChannel) -> (GRPCChannel, inserted: Bool) {
    if let existing = self.checkOut(fresh.key) {
      return (existing, false)
    }
    self.entries[fresh.key] = Entry(channel: fresh, activeCalls: 1, idleGeneration: 0)
    return (fresh, true)
  }

  /// Counts a call off; returns the idle generation to expire if the channel went idle.
  mutating func checkIn(_ channel: GRPCChannel) -> Int? {
    guard var entry = self.entries[channel.key], entry.channel === channel else { return nil }
    entry.activeCalls -= 1
    if entry.activeCalls == 0 {
      entry.idleGeneration += 1
    }
    self.entries[channel.key] = entry
    return entry.activeCalls == 0 ? entry.idleGeneration : nil
  }

  /// Removes the channel if it has stayed idle since `generation`; returns it to shut down.
  mutating func expire(_ channel: GRPCChannel, generation: Int) -> GRPCChannel? {
    guard let entry = self.entries[channel.key], entry.channel === channel,
      entry.activeCalls == 0, entry.idleGeneration == generation
    else { return nil }
    self.entries[channel.key] = nil
    return channel
  }

  mutating func removeAll() -> [GRPCChannel] {
    defer { self.entries.removeAll() }
    return self.entries.values.map(\.channel)
  }
}
