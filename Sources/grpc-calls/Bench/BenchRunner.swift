internal import Foundation

/// Runs each scenario's slices, alternating between every client and variant.
final class BenchRunner {
  private struct Contestant {
    var client: any BenchClient
    var variant: String
  }

  private let contestants: [Contestant]
  private let grpcio: GrpcioBenchPeer?
  private let settings: BenchSettings

  init(
    host: String,
    port: Int,
    settings: BenchSettings,
    clients: Set<String>,
    coalescing: [Bool],
    grpcio: GrpcioBenchPeer?
  ) throws {
    var contestants: [Contestant] = []
    for coalescing in coalescing {
      let variant = coalescing ? "coalescing-on" : "coalescing-off"
      let all: [any BenchClient] = [
        CallsBenchClient(target: "\(host):\(port)", flushCoalescing: coalescing),
        try CoreBenchClient(host: host, port: port, flushCoalescing: coalescing),
        try RawTransportBenchClient(host: host, port: port, flushCoalescing: coalescing),
      ]
      for client in all where clients.contains(client.name) {
        contestants.append(Contestant(client: client, variant: variant))
      }
    }
    self.contestants = contestants
    self.grpcio = grpcio
    self.settings = settings
  }

  func warmUp() async throws {
    for contestant in self.contestants {
      try await BenchSlices.warmUp(calls: self.settings.warmupCalls, client: contestant.client)
    }
  }

  func run(_ scenario: BenchScenario, into report: BenchReport) async throws {
    let rounds = self.settings.rounds
    var tallies = Array(repeating: Tally(), count: self.contestants.count)
    var grpcioTally = Tally()
    var progress = Progress(total: rounds * (self.contestants.count + (self.grpcio == nil ? 0 : 1)))
    for round in 0..<rounds {
      for (index, contestant) in self.contestants.enumerated() {
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
        grpcioTally.add(try await grpcio.run(scenario, slice: round, of: rounds, settings: self.settings))
      }
    }
    for (index, contestant) in self.contestants.enumerated() {
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
        report.add(scenario.rawValue, "grpcio", "plain", metric, scenario.value(of: metric, in: grpcioTally))
      }
    }
  }

  func close() {
    for contestant in self.contestants {
      contestant.client.close()
    }
  }
}
