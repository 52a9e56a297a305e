/// The connectivity state of one channel key of a pool, derived from the connections of the
/// channel currently serving it. I/O-free: ``ConnectivityMonitor`` feeds it what the transport's
/// connections report and tells observers of the changes it returns.
///
/// ```
///  channelStarted        attemptStarted           established
///  ───────────▶ IDLE ─────────────────▶ CONNECTING ───────────▶ READY
///                ▲ ▲                        │                    │ │
///                │ │      closed (attempt)  ▼     closed (broke) │ │
///                │ │              TRANSIENT_FAILURE ◀────────────┘ │
///                │ │                        │ established ▶ READY  │
///                │ └────────────────────────┼──────────────────────┘
///                │   closed or wentAway, nothing else connecting or ready
///                └── channelClosed (idle close, disconnect)
///
///  any ── shutDown ──▶ SHUTDOWN (final; later events change nothing)
/// ```
///
/// The state is a function of the connections: READY if one is established and not going away;
/// else TRANSIENT_FAILURE if an attempt failed (or a connection broke under calls) since the
/// last READY or IDLE, as gRPC core keeps it sticky (gRFC A62); else CONNECTING if an attempt is
/// under way; else IDLE. Events come tagged with the channel they are about: a channel the pool
/// closed may still report its connections' ends, which change nothing.
struct ConnectivityStateMachine {
  /// One connection of the current channel.
  private enum Connection {
    case connecting
    case ready
    /// It received a GOAWAY: new calls go elsewhere.
    case goingAway
  }

  private(set) var state: GRPCConnectivityState = .idle
  /// The channel whose connections count; `nil` when none is open.
  private var channel: Int?
  private var nextChannel = 0
  private var connections: [Int: Connection] = [:]
  private var nextConnection = 0
  /// Whether an attempt failed, or a connection broke, since the channel was last READY or IDLE.
  private var failing = false
  /// Whether the current channel began connecting yet.
  private var attempted = false

  /// Whether the current channel connected and went idle: its balancer connects again only for
  /// a call, where a new channel connects at once.
  var isDormant: Bool {
    self.state == .idle && self.channel != nil && self.attempted
  }

  /// A new channel's ID, for its events; it counts once it starts (``channelStarted(_:)``).
  mutating func makeChannelID() -> Int {
    defer { self.nextChannel += 1 }
    return self.nextChannel
  }

  /// The channel `id` started: from now on its connections are the ones that count.
  mutating func channelStarted(_ id: Int) -> GRPCConnectivityState? {
    guard self.state != .shutdown else { return nil }
    self.channel = id
    self.connections = [:]
    self.failing = false
    self.attempted = false
    return self.settle()
  }

  /// A connection of channel `channel` began connecting; returns its ID for the events that
  /// follow (which change nothing if the channel does not count) and the new state, if it
  /// changed.
  mutating func attemptStarted(
    channel: Int
  ) -> (connection: Int, change: GRPCConnectivityState?) {
    let id = self.nextConnection
    self.nextConnection += 1
    guard self.counts(channel) else { return (id, nil) }
    self.connections[id] = .connecting
    self.attempted = true
    return (id, self.settle())
  }

  /// The server's SETTINGS came on the connection.
  mutating func established(channel: Int, connection: Int) -> GRPCConnectivityState? {
    guard self.counts(channel), self.connections[connection] == .connecting else { return nil }
    self.connections[connection] = .ready
    self.failing = false
    return self.settle()
  }

  /// The server sent the connection a GOAWAY.
  mutating func wentAway(channel: Int, connection: Int) -> GRPCConnectivityState? {
    guard self.counts(channel), self.connections[connection] != nil else { return nil }
    self.connections[connection] = .goingAway
    return self.settle()
  }

  /// The connection closed: it had been `established` or not (a failed attempt), and `broke`
  /// under calls (the transport reconnects at once, as for a failed attempt).
  mutating func closed(
    channel: Int,
    connection: Int,
    established: Bool,
    broke: Bool
  ) -> GRPCConnectivityState? {
    guard self.counts(channel), self.connections.removeValue(forKey: connection) != nil else {
      return nil
    }
    if !established || broke {
      self.failing = true
    }
    return self.settle()
  }

  /// The pool closed the channel `channel`: it is idle until the next one starts.
  mutating func channelClosed(_ channel: Int) -> GRPCConnectivityState? {
    guard self.counts(channel) else { return nil }
    self.channel = nil
    self.connections = [:]
    self.failing = false
    return self.settle()
  }

  /// The pool shut down.
  mutating func shutDown() -> GRPCConnectivityState? {
    guard self.state != .shutdown else { return nil }
    self.channel = nil
    self.connections = [:]
    self.state = .shutdown
    return .shutdown
  }

  private func counts(_ channel: Int) -> Bool {
    self.state != .shutdown && self.channel == channel
  }

  /// Derives the state from the connections; returns it if it changed.
  private mutating func settle() -> GRPCConnectivityState? {
    let derived: GRPCConnectivityState
    if self.connections.values.contains(.ready) {
      derived = .ready
    } else if self.failing {
      derived = .transientFailure
    } else if self.connections.values.contains(.connecting) {
      derived = .connecting
    } else {
      derived = .idle
    }
    guard derived != self.state else { return nil }
    self.state = derived
    return derived
  }
}
