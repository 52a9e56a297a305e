internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterceptors
internal import Prometheus

/// Runs each scenario's slices, alternating between every client and variant.
final class BenchRunner {
  private struct Contestant {
    var client: any BenchClient
    var variant: String
    /// Runs only in these scenarios; `nil` for all.
    var only: Set<BenchScenario>? = nil
  }

  /// Every variant a contestant can have, in the order they run.
  static let variantNames = [
    "coalescing-on", "coalescing-off", "flow-control", "1-interceptor", "1-inline-interceptor",
    "metrics", "round-robin",
  ]

  private let contestants: [Contestant]
  private let grpcio: GrpcioBenchPeer?
  private let settings: BenchSettings

  init(
    host: String,
    port: Int,
    settings: BenchSettings,
    clients: Set<String>,
    coalescing: [Bool],
    variants: Set<String>?,
    grpcio: GrpcioBenchPeer?
  ) throws {
    var contestants: [Contestant] = []
    let wanted = { (variant: String) in variants?.contains(variant) ?? true }
    for coalescing in coalescing {
      let variant = coalescing ? "coalescing-on" : "coalescing-off"
      guard wanted(variant) else { continue }
      let all: [any BenchClient] = [
        CallsBenchClient(target: "\(host):\(port)", flushCoalescing: coalescing),
        AsyncBenchClient(target: "\(host):\(port)", flushCoalescing: coalescing),
        try CoreBenchClient<RawBenchCoding>(host: host, port: port, flushCoalescing: coalescing),
        try CoreBenchClient<ProtobufBenchCoding>(
          host: host,
          port: port,
          flushCoalescing: coalescing
        ),
        try RawTransportBenchClient(host: host, port: port, flushCoalescing: coalescing),
      ]
      for client in all where clients.contains(client.name) {
        contestants.append(Contestant(client: client, variant: variant))
      }
    }
    if clients.contains("grpc-calls") {
      let target = "\(host):\(port)"
      let coalescing = GRPCCallOptions.defaultFlushCoalescing
      // Made only when chosen: a client left out opens nothing.
      func add(_ variant: String, only: Set<BenchScenario>, _ make: () -> CallsBenchClient) {
        if wanted(variant) {
          contestants.append(Contestant(client: make(), variant: variant, only: only))
        }
      }
      // L49 flow control, measured where it matters: each round trip asks for its response.
      add("flow-control", only: [.pingPong]) {
        CallsBenchClient(target: target, flushCoalescing: coalescing, flowControl: true)
      }
      // L50: the cost of one interceptor that passes every event on.
      add("1-interceptor", only: [.pingPong, .unaryLatency]) {
        CallsBenchClient(target: target, flushCoalescing: coalescing, passThroughInterceptors: 1)
      }
      // The same interceptor running inline (`executesInline`): no hop to its own queue.
      add("1-inline-interceptor", only: [.pingPong, .unaryLatency]) {
        CallsBenchClient(
          target: target,
          flushCoalescing: coalescing,
          passThroughInterceptors: 1,
          inline: true
        )
      }
      // The round-robin balancer over the one address: what a service config that asks for it
      // costs a call.
      add("round-robin", only: [.unaryLatency, .unaryThroughput]) {
        CallsBenchClient(target: target, flushCoalescing: coalescing, balancing: .roundRobin)
      }
      // The ready-made metrics interceptor recording into a Prometheus registry: what a
      // production app pays for per-call metrics.
      add("metrics", only: [.pingPong, .unaryLatency]) {
        CallsBenchClient(
          target: target,
          flushCoalescing: coalescing,
          interceptors: [
            GRPCMetricsInterceptorFactory(
              factory: PrometheusMetricsFactory.openTelemetryNames(
                registry: PrometheusCollectorRegistry()
              )
            )
          ]
        )
      }
    }
    self.contestants = contestants
    self.grpcio = grpcio
    self.settings = settings
  }

  func warmUp() async throws {
    var progress = Progress(total: self.contestants.count)
    for contestant in self.contestants {
      progress.step("warm-up \(contestant.client.name) \(contestant.variant)")
      try await BenchSlices.warmUp(calls: self.settings.warmupCalls, client: contestant.client)
    }
  }

  func run(_ scenario: BenchScenario, into report: BenchReport) async throws {
    let rounds = self.settings.rounds
    let contestants = self.contestants.filter { $0.only?.contains(scenario) ?? true }
    var tallies = Array(repeating: Tally(), count: contestants.count)
    var grpcioTally = Tally()
    var progress = Progress(total: rounds * (contestants.count + (self.grpcio == nil ? 0 : 1)))
    for round in 0 ..< rounds {
      for (index, contestant) in contestants.enumerated() {
        progress.step("\(scenario.rawValue) \(contestant.client.name) \(contestant.variant)")
        tallies[index].add(
          try await BenchSlices.run(
            scenario,
            slice: round,
            of: rounds,
            settings: self.settings,
            client: contestant.client
          )
        )
      }
      if let grpcio = self.grpcio {
        progress.step("\(scenario.rawValue) grpcio")
        grpcioTally.add(
          try await grpcio.run(scenario, slice: round, of: rounds, settings: self.settings)
        )
      }
    }
    for (index, contestant) in contestants.enumerated() {
      for metric in scenario.metrics {
        report.add(
          scenario.rawValue,
          contestant.client.name,
          contestant.variant,
          metric,
          scenario.value(of: metric, in: tallies[index])
        )
      }
    }
    if self.grpcio != nil {
      for metric in scenario.metrics {
        report.add(
          scenario.rawValue,
          "grpcio",
          "plain",
          metric,
          scenario.value(of: metric, in: grpcioTally)
        )
      }
    }
  }

  func close() {
    for contestant in self.contestants {
      contestant.client.close()
    }
  }
}
