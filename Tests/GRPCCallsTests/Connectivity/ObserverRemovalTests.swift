import Dispatch
import GRPCCore
import Testing

@testable import GRPCCalls

/// An observer of a target with no channel leaves nothing in the pool once it goes. No I/O: the
/// target is never connected to.
@Suite("Connectivity observers going away")
struct ObserverRemovalTests {
  static let host = "127.0.0.1:1"

  static var options: GRPCCallOptions {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    return options
  }

  static func hasMonitor(_ pool: GRPCChannelPool) throws -> Bool {
    let key = try pool.key(host: Self.host, options: Self.options)
    return pool.state.withLock { $0.existingMonitor(for: key) } != nil
  }

  @Test("a cancelled callback observation drops its target's monitor")
  func observationCancelled() throws {
    let pool = GRPCChannelPool()
    let queue = DispatchQueue(label: "observer")
    let observation = try pool.observeState(host: Self.host, options: Self.options, queue: queue) {
      _ in
    }
    #expect(try Self.hasMonitor(pool))
    observation.cancel()
    #expect(try !Self.hasMonitor(pool))
  }

  @Test("a released stream of changes drops its target's monitor")
  func streamReleased() throws {
    let pool = GRPCChannelPool()
    var changes: AsyncStream<GRPCConnectivityState>? = try pool.stateChanges(
      host: Self.host,
      options: Self.options
    )
    #expect(changes != nil)
    #expect(try Self.hasMonitor(pool))
    changes = nil
    #expect(try !Self.hasMonitor(pool))
  }
}
