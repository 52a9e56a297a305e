import CoreMetrics
import Dispatch
import Logging
import Testing

@testable import GRPCCalls

@Suite("Channel pool bookkeeping (no I/O)")
struct PoolStateTests {
  let timeout = Duration.seconds(30)
  let start = ContinuousClock.now

  private func channel(id: Int = 0, connections: Int = 1) throws -> GRPCChannel {
    var options = GRPCCallOptions()
    options.channelId = id
    options.connectionsPerTarget = connections
    // Creating a channel opens nothing: connections start only with `start()`.
    return try GRPCChannel(
      key: ChannelKey(host: "127.0.0.1:1", options: options),
      options: options,
      registry: GRPCTransportRegistry(),
      logger: Logger(label: "test"),
      metrics: ChannelMetrics(target: "127.0.0.1:1", factory: NOOPMetricsHandler.instance),
      monitor: ConnectivityMonitor()
    )
  }

  @Test("one timer per idle period: calls one after another do not arm more")
  func oneTimerPerIdlePeriod() throws {
    var state = PoolState(idleTimeout: self.timeout)
    let channel = try self.channel()
    _ = state.checkOutOrInsert(channel)
    let armedFirst = state.checkIn(channel, connection: 0, now: self.start)
    #expect(armedFirst)
    for second in 1 ... 5 {
      let checkedOut = state.checkOut(channel.key)
      #expect(checkedOut?.channel === channel)
      let armedAgain = state.checkIn(channel, connection: 0, now: self.start + .seconds(second))
      #expect(!armedAgain)
    }
  }

  @Test("the timer re-arms for the rest when the channel went idle again later")
  func rearms() throws {
    var state = PoolState(idleTimeout: self.timeout)
    let channel = try self.channel()
    _ = state.checkOutOrInsert(channel)
    _ = state.checkIn(channel, connection: 0, now: self.start)
    _ = state.checkOut(channel.key)
    _ = state.checkIn(channel, connection: 0, now: self.start + .seconds(10))
    guard case .rearm(let remaining) = state.timerFired(channel, now: self.start + .seconds(30))
    else {
      Issue.record("expected a re-arm")
      return
    }
    #expect(remaining == .seconds(10))
    guard case .close = state.timerFired(channel, now: self.start + .seconds(40)) else {
      Issue.record("expected the channel to close")
      return
    }
    #expect(state.count == 0)
  }

  @Test("a busy channel disarms its timer; the next idle period arms a new one")
  func busyDisarms() throws {
    var state = PoolState(idleTimeout: self.timeout)
    let channel = try self.channel()
    _ = state.checkOutOrInsert(channel)
    _ = state.checkIn(channel, connection: 0, now: self.start)
    _ = state.checkOut(channel.key)
    guard case .none = state.timerFired(channel, now: self.start + .seconds(30)) else {
      Issue.record("a busy channel must not close")
      return
    }
    #expect(state.count == 1)
    let armed = state.checkIn(channel, connection: 0, now: self.start + .seconds(31))
    #expect(armed)
  }

  @Test("a lease from before removeAll cannot touch the channel that replaced its own")
  func identity() throws {
    var state = PoolState(idleTimeout: self.timeout)
    let old = try self.channel()
    _ = state.checkOutOrInsert(old)
    let removed = state.removeAll()
    #expect(removed.count == 1)
    let fresh = try self.channel()
    _ = state.checkOutOrInsert(fresh)
    let armed = state.checkIn(old, connection: 0, now: self.start)
    #expect(!armed)
    guard case .none = state.timerFired(old, now: self.start + .seconds(60)) else {
      Issue.record("an old channel's timer must not close the new one")
      return
    }
    #expect(state.count == 1)
  }

  @Test("a key's monitor stays while a channel or an observer uses it")
  func monitorLifetime() throws {
    var state = PoolState(idleTimeout: self.timeout)
    let channel = try self.channel()
    let monitor = state.monitor(for: channel.key)
    #expect(state.monitor(for: channel.key) === monitor)
    _ = state.checkOutOrInsert(channel)
    _ = state.checkIn(channel, connection: 0, now: self.start)
    let observer = monitor.addObserver(.callback(.global(), { _ in }))
    guard case .close = state.timerFired(channel, now: self.start + .seconds(30)) else {
      Issue.record("an idle channel must close")
      return
    }
    #expect(state.existingMonitor(for: channel.key) === monitor)
    monitor.removeObserver(observer)
    state.dropMonitorIfUnused(channel.key)
    #expect(state.existingMonitor(for: channel.key) == nil)
  }

  @Test("after shutDown no channel opens and every monitor is returned, a new one shut down")
  func shutDown() throws {
    var state = PoolState(idleTimeout: self.timeout)
    let channel = try self.channel()
    let monitor = state.monitor(for: channel.key)
    _ = state.checkOutOrInsert(channel)
    let (channels, monitors) = state.shutDown()
    #expect(channels.count == 1 && monitors.count == 1 && monitors[0] === monitor)
    #expect(state.isShutDown)
    #expect(state.checkOutOrInsert(try self.channel(id: 1)) == nil)
    #expect(state.monitor(for: channel.key).current == .shutdown)
    #expect(state.count == 0)
  }

  @Test(
    "each call goes to the connection with the fewest in flight; one starts only when all have one"
  )
  func connectionPicking() throws {
    var state = PoolState(idleTimeout: self.timeout)
    let channel = try self.channel(connections: 3)
    #expect(channel.connections.count == 3)
    let inserted = state.checkOutOrInsert(channel)
    #expect(inserted?.0.connection == 0 && inserted?.0.starts == true)
    var picks: [(Int, Bool)] = []
    for _ in 0 ..< 4 {
      let checkout = state.checkOut(channel.key)
      picks.append((checkout?.connection ?? -1, checkout?.starts ?? false))
    }
    #expect(picks.map(\.0) == [1, 2, 0, 1])
    #expect(picks.map(\.1) == [true, true, false, false])
    // In flight: [2, 2, 1].
    #expect(state.nextConnection(for: channel.key)?.inFlight == 1)
    _ = state.checkIn(channel, connection: 1, now: self.start)
    _ = state.checkIn(channel, connection: 1, now: self.start)
    #expect(state.checkOut(channel.key)?.connection == 1)
  }

  @Test("calls one after another stay on the first connection")
  func sequentialCallsShareOneConnection() throws {
    var state = PoolState(idleTimeout: self.timeout)
    let channel = try self.channel(connections: 4)
    _ = state.checkOutOrInsert(channel)
    _ = state.checkIn(channel, connection: 0, now: self.start)
    for _ in 0 ..< 10 {
      let checkout = state.checkOut(channel.key)
      #expect(checkout?.connection == 0 && checkout?.starts == false)
      _ = state.checkIn(channel, connection: 0, now: self.start)
    }
  }

  @Test("a channel still connecting with no call is not closed: its idle period starts again")
  func connectingIsNotIdle() throws {
    var state = PoolState(idleTimeout: self.timeout)
    let channel = try self.channel()
    let monitor = state.monitor(for: channel.key)
    let reporter = monitor.makeReporter(
      metrics: ChannelMetrics(target: "127.0.0.1:1", factory: NOOPMetricsHandler.instance)
    )
    _ = state.checkOutOrInsert(channel)
    reporter.start()
    let connection = reporter.attemptStarted()
    #expect(monitor.current == .connecting)
    _ = state.checkIn(channel, connection: 0, now: self.start)
    guard case .rearm(let wait) = state.timerFired(channel, now: self.start + .seconds(30)) else {
      Issue.record("a connecting channel must not close")
      return
    }
    #expect(wait == self.timeout)
    reporter.abandoned(connection)
    #expect(monitor.current == .transientFailure)
    guard case .close = state.timerFired(channel, now: self.start + .seconds(60)) else {
      Issue.record("a channel that failed to connect closes once idle")
      return
    }
  }
}
