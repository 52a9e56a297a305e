internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCCallsTestSupport

/// Runs one fault scenario under a probe load and measures it.
///
/// The timeline: the load runs until 20 calls have succeeded; the fault is injected (T0) and
/// lasts its duration; it is removed (T1, once the removal is done); the load runs until a call
/// started after T1 has succeeded, and one second more. Every call waits for ready, so a call
/// made while the network is down waits instead of failing: the calls that fail are those the
/// fault caught with their bytes on the wire.
struct FaultRunner {
  let scenario: FaultScenario
  let inFlight: Int
  /// Each call's deadline, unless the scenario sets its own.
  let deadline: Duration

  func run() async throws -> FaultReport {
    let environment = try await FaultEnvironment.start(
      childProcess: self.scenario.serverInChildProcess
    )
    let pool = GRPCChannelPool()
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.waitForReady = true
    options.timeout = TimeInterval(self.deadline / .seconds(1))
    self.scenario.configure(&options)
    let client = InteropClient(
      target: "127.0.0.1:\(environment.proxy.port)",
      callOptions: options,
      channelPool: pool
    )
    let load = ProbeLoad(client: client)
    let running = Task { await load.run(inFlight: self.inFlight) }

    _ = await eventually(upTo: 60) {
      load.records.count { $0.end != nil && $0.code == nil } >= 20 ? true : nil
    }
    let injected = ContinuousClock.now
    try await self.scenario.inject(environment)
    try await Task.sleep(for: self.scenario.duration)
    // The fault ends when its removal is done (a restarted server listens, say).
    try await self.scenario.remove(environment)
    let removed = ContinuousClock.now
    _ = await eventually(upTo: 60) {
      load.records.contains { $0.start >= removed && $0.end != nil && $0.code == nil } ? true : nil
    }
    try await Task.sleep(for: .seconds(1))
    load.stop()
    // Every call has a deadline: the callers return once their last calls closed.
    let stoppedAt = ContinuousClock.now
    while !running.isCancelled, ContinuousClock.now - stoppedAt < self.deadline + .seconds(60) {
      if load.records.allSatisfy({ $0.end != nil }) { break }
      try await Task.sleep(for: .milliseconds(20))
    }
    pool.disconnectAll()
    await environment.stop()
    return FaultReport(
      scenario: self.scenario.name,
      records: load.records,
      injected: injected,
      removed: removed
    )
  }
}
