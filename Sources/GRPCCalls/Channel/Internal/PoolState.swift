/// The pool's bookkeeping: which channel serves each key, how many calls it runs, and when it
/// went idle.
///
/// Idle closing uses at most one timer per channel at a time. A channel that goes idle arms a
/// timer only if none is pending; when the timer fires, the channel is closed if it has been
/// idle for the whole timeout, re-armed for the rest if it went idle again later or for a whole
/// timeout if it is still CONNECTING, and left alone (disarmed) if a call is running. A channel used by one call after another therefore
/// costs one timer per timeout period, not one per call.
///
/// Channels are matched by identity, so a lease from before ``removeAll()`` cannot touch the
/// channel that replaced its own.
///
/// A call goes to the channel's connection with the fewest calls in flight; a connection not
/// yet started counts only once every started one has a call (``Checkout/starts``).
///
/// Each key with a channel or an observer has a ``ConnectivityMonitor``, kept while either is;
/// after ``shutDown()`` no channel opens.
struct PoolState {
  private struct Entry {
    var channel: GRPCChannel
    var activeCalls: Int
    /// Calls in flight on each started connection; connections start in order.
    var inFlight: [Int]
    var idleSince: ContinuousClock.Instant?
    var timerArmed: Bool

    /// The connection the next call goes to, and whether it has to start.
    func pick() -> (connection: Int, starts: Bool) {
      var best = 0
      for index in self.inFlight.indices where self.inFlight[index] < self.inFlight[best] {
        best = index
      }
      if self.inFlight[best] > 0, self.inFlight.count < self.channel.connections.count {
        return (self.inFlight.count, true)
      }
      return (best, false)
    }

    /// Counts a call on the connection ``pick()`` chose.
    mutating func checkOut() -> Checkout {
      let (connection, starts) = self.pick()
      if starts {
        self.inFlight.append(0)
      }
      self.inFlight[connection] += 1
      self.activeCalls += 1
      self.idleSince = nil
      return Checkout(channel: self.channel, connection: connection, starts: starts)
    }

    /// Counts a call off `connection`; returns `true` if the idle timer must be armed.
    mutating func checkIn(connection: Int, now: ContinuousClock.Instant) -> Bool {
      self.activeCalls -= 1
      self.inFlight[connection] -= 1
      guard self.activeCalls == 0 else { return false }
      self.idleSince = now
      defer { self.timerArmed = true }
      return !self.timerArmed
    }
  }

  /// A call's place: the channel, its connection, and whether that connection has to start.
  struct Checkout {
    let channel: GRPCChannel
    /// The index of the connection in the channel's ``GRPCChannel/connections``.
    let connection: Int
    let starts: Bool

    /// The connection the call goes to.
    var channelConnection: ChannelConnection {
      self.channel.connections[self.connection]
    }
  }

  /// What to do when a timer fires.
  enum TimerAction {
    /// Close this channel: it has been idle for the whole timeout.
    case close(GRPCChannel)
    /// Fire again after this long: the channel went idle again after the timer was armed.
    case rearm(Duration)
    /// Nothing: the channel is busy or gone.
    case none
  }

  private var entries: [ChannelKey: Entry] = [:]
  private var monitors: [ChannelKey: ConnectivityMonitor] = [:]
  /// Channels being made outside the lock, by key: their monitor must stay.
  private var building: [ChannelKey: Int] = [:]
  private let idleTimeout: Duration
  /// Whether the pool was shut down: it opens no channel again.
  private(set) var isShutDown = false

  init(idleTimeout: Duration) {
    self.idleTimeout = idleTimeout
  }

  var count: Int { self.entries.count }

  /// The open channel for `key` and how many calls run on it, without counting a call.
  func channel(for key: ChannelKey) -> (channel: GRPCChannel, activeCalls: Int)? {
    self.entries[key].map { ($0.channel, $0.activeCalls) }
  }

  /// The started connection the next call to `key` would go to, and the calls in flight on it,
  /// without counting a call.
  func nextConnection(for key: ChannelKey) -> (ChannelConnection, inFlight: Int)? {
    guard let entry = self.entries[key] else { return nil }
    let (connection, starts) = entry.pick()
    guard !starts else { return nil }
    return (entry.channel.connections[connection], entry.inFlight[connection])
  }

  /// The connectivity monitor of `key`, made if there is none.
  mutating func monitor(for key: ChannelKey) -> ConnectivityMonitor {
    if let monitor = self.monitors[key] {
      return monitor
    }
    let monitor = ConnectivityMonitor()
    if self.isShutDown {
      monitor.apply { $0.shutDown() }
    } else {
      self.monitors[key] = monitor
    }
    return monitor
  }

  /// The connectivity monitor of `key`, if it has a channel or an observer.
  func existingMonitor(for key: ChannelKey) -> ConnectivityMonitor? {
    self.monitors[key]
  }

  /// Forgets the monitor of `key` unless a channel (open or being made) or an observer still
  /// uses it.
  mutating func dropMonitorIfUnused(_ key: ChannelKey) {
    guard self.entries[key] == nil, self.building[key] == nil, let monitor = self.monitors[key],
      !monitor.hasObservers
    else { return }
    self.monitors[key] = nil
  }

  /// The monitor for a channel of `key` about to be made outside the lock; it stays until
  /// ``checkOutOrInsert(_:)`` or ``buildFailed(_:)``.
  mutating func monitorForBuilding(_ key: ChannelKey) -> ConnectivityMonitor {
    self.building[key, default: 0] += 1
    return self.monitor(for: key)
  }

  /// A channel of `key` could not be made.
  mutating func buildFailed(_ key: ChannelKey) {
    self.finishedBuilding(key)
    self.dropMonitorIfUnused(key)
  }

  private mutating func finishedBuilding(_ key: ChannelKey) {
    guard let count = self.building[key] else { return }
    self.building[key] = count > 1 ? count - 1 : nil
  }

  mutating func checkOut(_ key: ChannelKey) -> Checkout? {
    guard let index = self.entries.index(forKey: key) else { return nil }
    // In place: a copy of the entry would copy its `inFlight` on the first write.
    return self.entries.values[index].checkOut()
  }

  /// Checks out the channel for `fresh.key`, inserting `fresh` if there is none; `nil` once the
  /// pool is shut down.
  mutating func checkOutOrInsert(_ fresh: GRPCChannel) -> (Checkout, inserted: Bool)? {
    self.finishedBuilding(fresh.key)
    if self.isShutDown { return nil }
    if let existing = self.checkOut(fresh.key) {
      return (existing, false)
    }
    self.entries[fresh.key] = Entry(
      channel: fresh,
      activeCalls: 1,
      inFlight: [1],
      idleSince: nil,
      timerArmed: false
    )
    return (Checkout(channel: fresh, connection: 0, starts: true), true)
  }

  /// Counts a call off `connection` of `channel`; returns `true` if the caller must arm the
  /// channel's idle timer.
  mutating func checkIn(
    _ channel: GRPCChannel,
    connection: Int,
    now: ContinuousClock.Instant
  ) -> Bool {
    guard let index = self.entries.index(forKey: channel.key),
      self.entries.values[index].channel === channel
    else { return false }
    return self.entries.values[index].checkIn(connection: connection, now: now)
  }

  /// The channel's idle timer fired.
  mutating func timerFired(_ channel: GRPCChannel, now: ContinuousClock.Instant) -> TimerAction {
    guard var entry = self.entries[channel.key], entry.channel === channel else { return .none }
    guard entry.activeCalls == 0, let idleSince = entry.idleSince else {
      entry.timerArmed = false
      self.entries[channel.key] = entry
      return .none
    }
    let idleFor = now - idleSince
    if idleFor >= self.idleTimeout, self.monitors[channel.key]?.current == .connecting {
      // Connecting with no call waiting (``GRPCChannelPool/connect(host:options:)``): the idle
      // period starts again once the attempt settles, so a slow handshake is not cut short.
      entry.idleSince = now
      self.entries[channel.key] = entry
      return .rearm(self.idleTimeout)
    }
    if idleFor >= self.idleTimeout {
      self.entries[channel.key] = nil
      self.dropMonitorIfUnused(channel.key)
      return .close(channel)
    }
    return .rearm(self.idleTimeout - idleFor)
  }

  /// Removes a channel, to replace it.
  mutating func remove(_ channel: GRPCChannel) -> Bool {
    guard self.entries[channel.key]?.channel === channel else { return false }
    self.entries[channel.key] = nil
    return true
  }

  mutating func removeAll() -> [GRPCChannel] {
    let channels = self.entries.values.map(\.channel)
    self.entries.removeAll()
    for key in self.monitors.keys {
      self.dropMonitorIfUnused(key)
    }
    return channels
  }

  /// Shuts the pool down: returns its channels, to close, and its monitors, to shut down.
  mutating func shutDown() -> (channels: [GRPCChannel], monitors: [ConnectivityMonitor]) {
    self.isShutDown = true
    self.building.removeAll()
    let channels = self.entries.values.map(\.channel)
    let monitors = Array(self.monitors.values)
    self.entries.removeAll()
    self.monitors.removeAll()
    return (channels, monitors)
  }
}
