public import CoreMetrics
internal import GRPCCallsInput
internal import GRPCCore
public import Logging

/// Caches channels by host and channel-level options so that calls with the same settings share
/// a connection.
///
/// One pool, ``shared``, serves the process; tests and components that want their own
/// connections make their own and pass it to ``GRPCCall2``. A channel with no call running is
/// closed after ``Config/idleTimeout``; the next call to its key opens a fresh one.
public final class GRPCChannelPool: Sendable {
  /// How the pool manages its channels.
  public struct Config: Sendable {
    /// How long a channel with no running call stays open.
    public var idleTimeout: Duration

    /// Where ``GRPCCallOptions/transport`` IDs are looked up.
    public var transportRegistry: GRPCTransportRegistry

    /// Where channels log (opened, closed, transport fallbacks), with each channel's
    /// ``GRPCCallOptions/logContext`` in the records' metadata.
    public var logger: Logger

    /// Where the pool's figures go (connections opened, closed and failed; calls in flight:
    /// the *Many servers* article lists them); `nil` (the default): the process's
    /// `MetricsSystem`, as bootstrapped when each target's first channel opens.
    public var metricsFactory: (any MetricsFactory)?

    /// Sends every call through `GRPCClient`, even one the raw path would take: a test-only
    /// switch, so that behaviour tests cover both paths to the core.
    package var sendsEveryCallThroughClient = false

    /// Creates a configuration.
    public init(
      idleTimeout: Duration,
      transportRegistry: GRPCTransportRegistry = .shared,
      logger: Logger = Logger(label: "grpc-calls"),
      metricsFactory: (any MetricsFactory)? = nil
    ) {
      self.idleTimeout = idleTimeout
      self.transportRegistry = transportRegistry
      self.logger = logger
      self.metricsFactory = metricsFactory
    }

    /// Closes idle channels after 30 seconds.
    public static var defaults: Self { Self(idleTimeout: .seconds(30)) }
  }

  /// The pool calls use unless given another.
  public static let shared = GRPCChannelPool()

  public let config: Config
  let state: LockedValue<PoolState>
  /// Each target's figures, shared by its channels (one meter of calls in flight per target).
  private let metrics = LockedValue<[String: ChannelMetrics]>([:])

  /// Creates an empty pool.
  public init(config: Config = .defaults) {
    self.config = config
    self.state = LockedValue(PoolState(idleTimeout: config.idleTimeout))
  }

  /// The number of open channels.
  public var channelCount: Int {
    self.state.withLock { $0.count }
  }

  /// Closes every channel at once, failing the calls still running on them.
  ///
  /// A call made afterwards opens a new connection. The channels' connectivity state becomes
  /// ``GRPCConnectivityState/idle``.
  public func disconnectAll() {
    for channel in self.state.withLock({ $0.removeAll() }) {
      channel.close()
    }
  }

  /// Shuts the pool down for good: calls already running finish, new ones fail with
  /// UNAVAILABLE, and every connectivity state becomes ``GRPCConnectivityState/shutdown``.
  ///
  /// For an app's or a component's own pool, at its end; the ``shared`` pool is the process's.
  public func shutDown() {
    let (channels, monitors) = self.state.withLock { $0.shutDown() }
    for monitor in monitors {
      monitor.apply { $0.shutDown() }
    }
    for channel in channels {
      channel.shutDown()
    }
  }

  /// The channel key of a call to `host` with `options`: derived once for options and those of
  /// their copies with the same channel-level options (``GRPCCallOptions/channelKeyCache``).
  func key(host: String, options: GRPCCallOptions) throws(GRPCError) -> ChannelKey {
    try options.channelKeyCache.key(host: host, options: options)
  }

  /// The executor for the task of a call on `key`'s channel: that of the event loop of the
  /// connection it would go to while that is open and nearly idle; `nil` (the shared pool)
  /// otherwise.
  ///
  /// On the loop a call makes no thread hop, which is what a lone call's latency needs; many
  /// calls at once do better spread over the pool's threads beside the loop's I/O, as their
  /// per-call work would otherwise queue on the loop's one thread.
  func executor(for key: ChannelKey) -> EventLoopTaskExecutor? {
    guard let (connection, inFlight) = self.state.withLock({ $0.nextConnection(for: key) }),
      inFlight < Self.callsOnLoop
    else { return nil }
    return connection.executor
  }

  /// Up to how many calls already running on a connection a new one still runs on its loop.
  static let callsOnLoop = 2

  /// Returns the channel for `key`, opening one if needed, and counts a call on it.
  ///
  /// Every lease must be returned with ``ChannelLease/release()`` when the call ends.
  ///
  /// - Parameter options: The options of the call, for a channel that has to be opened.
  func lease(for key: ChannelKey, options: GRPCCallOptions) throws(GRPCError) -> ChannelLease {
    enum Found {
      case checkout(PoolState.Checkout)
      case none(ConnectivityMonitor)
      case shutDown
    }
    let found = self.state.withLock { state -> Found in
      if state.isShutDown { return .shutDown }
      if let checkout = state.checkOut(key) { return .checkout(checkout) }
      return .none(state.monitorForBuilding(key))
    }
    let monitor: ConnectivityMonitor
    switch found {
    case .checkout(let checkout):
      return self.lease(checkout)
    case .shutDown:
      throw Self.shutDownError
    case .none(let keyMonitor):
      monitor = keyMonitor
    }
    // Making a transport may read trust roots from disk: do it outside the lock, then keep
    // whichever channel got into the pool first.
    let fresh: GRPCChannel
    do {
      fresh = try GRPCChannel(
        key: key,
        options: options,
        registry: self.config.transportRegistry,
        logger: self.config.logger,
        metrics: self.metrics(for: key),
        monitor: monitor
      )
    } catch {
      self.state.withLock { $0.buildFailed(key) }
      throw error
    }
    let checkout = self.state.withLock { state -> PoolState.Checkout? in
      guard let (checkout, inserted) = state.checkOutOrInsert(fresh) else { return nil }
      if inserted {
        // Before any connection starts, even one a call racing this one starts.
        fresh.startReporting()
      }
      return checkout
    }
    guard let checkout else {
      throw Self.shutDownError
    }
    return self.lease(checkout)
  }

  /// The lease of a checked-out connection, started if it has to be.
  private func lease(_ checkout: PoolState.Checkout) -> ChannelLease {
    if checkout.starts {
      checkout.channelConnection.start()
    }
    checkout.channel.metrics.callStarted()
    return ChannelLease(checkout: checkout, pool: self)
  }

  /// The figures of `key`'s target.
  private func metrics(for key: ChannelKey) -> ChannelMetrics {
    let target = key.target.description
    return self.metrics.withLock { metrics in
      if let existing = metrics[target] { return existing }
      let made = ChannelMetrics(
        target: target,
        factory: self.config.metricsFactory ?? MetricsSystem.factory
      )
      metrics[target] = made
      return made
    }
  }

  static let shutDownError = GRPCError(
    code: .unavailable,
    message:
      "The channel pool was shut down (GRPCChannelPool.shutDown()); make a new GRPCChannelPool for more calls"
  )

  fileprivate func release(_ checkout: PoolState.Checkout) {
    let channel = checkout.channel
    channel.metrics.callEnded()
    let arm = self.state.withLock {
      $0.checkIn(channel, connection: checkout.connection, now: .now)
    }
    if arm {
      self.armIdleTimer(for: channel, after: self.config.idleTimeout)
    }
  }

  private func armIdleTimer(for channel: GRPCChannel, after delay: Duration) {
    Task { [weak self] in
      try? await Task.sleep(for: delay)
      guard let self else { return }
      switch self.state.withLock({ $0.timerFired(channel, now: .now) }) {
      case .close(let idle):
        idle.shutDown()
      case .rearm(let remaining):
        self.armIdleTimer(for: channel, after: remaining)
      case .none:
        break
      }
    }
  }
}

/// A call's hold on a connection of a pooled channel; releasing it lets the channel go idle.
struct ChannelLease: Sendable {
  fileprivate let checkout: PoolState.Checkout
  fileprivate let pool: GRPCChannelPool

  /// The client of the connection the call goes to.
  var client: any ChannelClient {
    self.checkout.channelConnection.client
  }

  /// The executor of that connection's event loop, if the pool knows it.
  var executor: EventLoopTaskExecutor? {
    self.checkout.channelConnection.executor
  }

  func release() {
    self.pool.release(self.checkout)
  }
}
