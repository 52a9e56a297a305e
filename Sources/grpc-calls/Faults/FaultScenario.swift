internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCCallsTestSupport

/// One fault `grpc-calls faults` injects: how it starts, how long it lasts, how it ends, and
/// what the calls need to face it (keepalive, a deadline).
struct FaultScenario: Sendable {
  var name: String
  /// Whether the server runs in a process of its own (to be killed); in this process otherwise.
  var serverInChildProcess = false
  /// Options of the calls, beyond the defaults: every call waits for ready, with the run's
  /// deadline (10 s unless `--deadline` says otherwise).
  var configure: @Sendable (inout GRPCCallOptions) -> Void = { _ in }
  /// How long the fault lasts.
  var duration: Duration
  var inject: @Sendable (FaultEnvironment) async throws -> Void
  var remove: @Sendable (FaultEnvironment) async throws -> Void = { _ in }

  static let all: [FaultScenario] = [
    FaultScenario(
      name: "connections reset (RST) for 0.5 s",
      duration: .milliseconds(500),
      inject: { $0.proxy.inject(.reset) },
      remove: { $0.proxy.inject(.none) }
    ),
    FaultScenario(
      name: "network flap: down 2 s, back on the same port",
      duration: .seconds(2),
      inject: { $0.proxy.stopListening() },
      remove: { try $0.proxy.startListening() }
    ),
    FaultScenario(
      name: "server killed (SIGKILL), restarted 1 s later",
      serverInChildProcess: true,
      duration: .seconds(1),
      inject: { try await $0.killServer() },
      remove: { try await $0.restartServer() }
    ),
    FaultScenario(
      name: "server shuts down gracefully (GOAWAY), another takes its port",
      // Calls racing the GOAWAY are the fault's; counted from 0.5 s later, a call that fails is lost.
      duration: .milliseconds(500),
      inject: { try await $0.replaceServerGracefully() }
    ),
    FaultScenario(
      name: "peer silent 6 s, keepalive 1 s / 1 s",
      configure: {
        $0.keepaliveInterval = 1
        $0.keepaliveTimeout = 1
      },
      duration: .seconds(6),
      inject: { $0.proxy.inject(.stall) },
      remove: { $0.proxy.inject(.none) }
    ),
    FaultScenario(
      name: "peer silent 4 s, no keepalive, 3 s deadline",
      configure: { $0.timeout = 3 },
      duration: .seconds(4),
      inject: { $0.proxy.inject(.stall) },
      remove: { $0.proxy.inject(.none) }
    ),
    FaultScenario(
      name: "connections cut after 16 KiB, for 3 s",
      duration: .seconds(3),
      inject: { $0.proxy.inject(.closeAfter(bytes: 16 * 1024)) },
      remove: { $0.proxy.inject(.none) }
    ),
    FaultScenario(
      name: "slow network: 64 KiB/s for 3 s",
      duration: .seconds(3),
      inject: { $0.proxy.inject(.bandwidth(bytesPerSecond: 64 * 1024)) },
      remove: { $0.proxy.inject(.none) }
    ),
  ]
}
