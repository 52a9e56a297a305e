import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// Three interop servers, on 127.0.0.1, 127.0.0.2 and 127.0.0.3 (all loopback), and a client of
/// all three through one `ipv4:` target.
private final class ThreeServers: @unchecked Sendable {
  // @unchecked: `servers` changes only from the test's own task.
  var servers: [InteropServer]
  let ports: [Int]
  let pool = GRPCChannelPool()

  static let hosts = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]

  /// Runs `body` with three servers, stopping them after.
  static func with(_ body: (ThreeServers) async throws -> Void) async throws {
    let servers = try await ThreeServers()
    do {
      try await body(servers)
    } catch {
      await servers.close()
      throw error
    }
    await servers.close()
  }

  private init() async throws {
    var servers: [InteropServer] = []
    for host in Self.hosts {
      servers.append(try await InteropServer.start(host: host, port: 0, compression: false))
    }
    self.servers = servers
    self.ports = servers.map(\.port)
  }

  var target: String {
    "ipv4:" + zip(Self.hosts, self.ports).map { "\($0):\($1)" }.joined(separator: ",")
  }

  /// Unary calls each server has served.
  var served: [Int] {
    self.servers.map { server in server.recorder.rpcs.count { $0.method.hasSuffix("/UnaryCall") } }
  }

  func stop(_ index: Int) async {
    await self.servers[index].stopAndWait()
  }

  func restart(_ index: Int) async throws {
    self.servers[index] = try await InteropServer.start(
      host: Self.hosts[index],
      port: self.ports[index],
      compression: false
    )
  }

  func close() async {
    self.pool.disconnectAll()
    for server in self.servers {
      await server.stopAndWait()
    }
  }

  /// Options with `policy`, and with `retries` a service config that retries UNAVAILABLE (a
  /// call that meets a server going away is tried again, through `GRPCClient`); without, calls
  /// take the raw path, where only transparent retry covers them.
  static func options(_ policy: GRPCLoadBalancingPolicy, retries: Bool) throws -> GRPCCallOptions {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.timeout = CloseWait.seconds
    options.loadBalancingPolicy = policy
    // A stopped server's address comes back to the round-robin balancer within one interval.
    options.nameResolutionInterval = 1
    guard retries else { return options }
    options.serviceConfig = try GRPCServiceConfig.parse(
      """
      {"methodConfig": [{"name": [{"service": "grpc.testing.TestService"}],
        "retryPolicy": {"maxAttempts": 5, "initialBackoff": "0.05s", "maxBackoff": "0.5s",
          "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}
      """
    )
    return options
  }

  /// Makes `count` unary calls one after another; returns how many failed, and how.
  func calls(_ count: Int, options: GRPCCallOptions) async throws -> [String] {
    let client = InteropClient(target: self.target, callOptions: options, channelPool: self.pool)
    var failures: [String] = []
    for _ in 0 ..< count {
      let (call, recorder) = try client.makeCall("UnaryCall")
      call.start()
      call.writeData(try unaryRequest(responseBytes: 10).bytes)
      call.finish()
      let close = await recorder.waitForClose()
      if let error = close.map({ $0.error }) ?? GRPCError(code: .unknown, message: "no close") {
        failures.append("\(error.code): \(error.message)")
      }
    }
    return failures
  }
}

@Suite("Balancing over three servers")
struct BalancingTests {
  @Test(
    "round_robin spreads sequential calls evenly; a server that stops loses its share with no call failing, and takes calls again once back",
    arguments: [true, false]
  )
  func roundRobin(retries: Bool) async throws {
    let options = try ThreeServers.options(.roundRobin, retries: retries)
    try await ThreeServers.with { (servers: ThreeServers) async throws in
      #expect(try await servers.calls(3000, options: options).isEmpty)
      let first = servers.served
      for served in first {
        #expect((900 ... 1100).contains(served), "\(first)")
      }

      await servers.stop(1)
      #expect(try await servers.calls(1500, options: options).isEmpty)
      let second = zip(servers.served, first).map { $0 - $1 }
      #expect(second[1] == 0, "\(second)")
      for index in [0, 2] {
        #expect((675 ... 825).contains(second[index]), "\(second)")
      }

      try await servers.restart(1)
      // The channel reconnects to it (backing off) and sends it calls again.
      var failures: [String] = []
      let deadline = ContinuousClock.now + .seconds(CloseWait.seconds)
      while servers.served[1] == 0, ContinuousClock.now < deadline {
        failures += try await servers.calls(10, options: options)
      }
      #expect(failures == [])
      #expect(servers.served[1] > 0, "the restarted server took no call: \(servers.served)")
    }
  }

  @Test(
    "pick_first sends every call to the first address until it stops, then to the second",
    arguments: [true, false]
  )
  func pickFirst(retries: Bool) async throws {
    let options = try ThreeServers.options(.pickFirst, retries: retries)
    try await ThreeServers.with { (servers: ThreeServers) async throws in
      #expect(try await servers.calls(300, options: options).isEmpty)
      #expect(servers.served == [300, 0, 0])
      await servers.stop(0)
      #expect(try await servers.calls(300, options: options).isEmpty)
      #expect(servers.served[1] == 300 && servers.served[2] == 0, "\(servers.served)")
    }
  }
}
