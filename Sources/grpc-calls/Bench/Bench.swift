internal import ArgumentParser
internal import Foundation

/// `grpc-calls bench`: the same work through this library, grpc-swift-2 directly, the raw
/// transport and grpcio, alternating, with ratios. Build with `-c release`.
struct Bench: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Measure grpc-calls side by side with grpc-swift-2, the raw transport and grpcio.",
    discussion: """
      Scenarios: \(BenchScenario.allCases.map(\.rawValue).joined(separator: ", ")), \
      leak, memory-backpressure, or 'server-streaming' for both sizes, or 'all'; \
      and soak (not in 'all': 10 minutes of mixed calls, resident memory read throughout). Each runs against the interop server \
      (a separate `grpc-calls serve` process unless --server is given), in rounds that \
      alternate between clients. Run a release build: swift run -c release grpc-calls bench.
      """
  )

  @Option(help: "Scenarios: a name, a comma-separated list, or 'all'.")
  var scenario = "all"

  @Option(help: "Use a running interop server at host:port instead of starting one.")
  var server: String?

  @Option(help: "Write every figure as a JSON array of records to this file.")
  var json: String?

  @Option(help: "The Python with grpcio for the grpcio peer (default: .venv-interop/bin/python).")
  var python: String?

  @Flag(help: "Leave out the grpcio peer.")
  var noGrpcio = false

  @Option(
    help: """
      Swift clients to run: a comma-separated subset of grpc-calls, grpc-calls-async, \
      grpc-swift-2, grpc-swift-2-proto, raw-transport.
      """
  )
  var clients = "grpc-calls,grpc-calls-async,grpc-swift-2,grpc-swift-2-proto,raw-transport"

  @Option(help: "Flush coalescing variants to run: on, off or both.")
  var coalescing = "both"

  @Option(
    help: """
      Variants to run, after --clients and --coalescing: a comma-separated subset of \
      \(BenchRunner.variantNames.joined(separator: ", ")), or 'all'. One variant alone is \
      what a profiler should watch.
      """
  )
  var variants = "all"

  @Option(help: "Calls in flight for unary-throughput.")
  var concurrency = 64

  @Option(help: "Seconds per client for unary-throughput and each server-streaming scenario.")
  var duration: Double?

  @Option(help: "Calls for unary-latency and round trips for ping-pong (default 10,000).")
  var calls: Int?

  @Option(
    help: "HTTP/2 window in bytes for memory-backpressure (default 1 MiB; 0 = the core's 8 MiB)."
  )
  var window: Int?

  @Option(
    help: "Milliseconds the memory-backpressure reader spends on each 1 MiB message (default 10)."
  )
  var readIntervalMs: Int?

  @Option(help: "Unary calls per face for leak, after warm-up (default 100,000; --quick: 2,000).")
  var leakCalls: Int?

  @Option(help: "Warm-up calls per face for leak (default 10,000; --quick: 200).")
  var leakWarmupCalls: Int?

  @Option(help: "Seconds the soak runs (default 600).")
  var soakSeconds: Int?

  @Option(help: "Calls in flight during the soak (default 8).")
  var soakInFlight: Int?

  @Flag(help: "A small run that checks every scenario works; figures are not meaningful.")
  var quick = false

  func run() async throws {
    var settings = self.quick ? BenchSettings.quick : BenchSettings()
    settings.concurrency = self.quick ? settings.concurrency : self.concurrency
    if let calls = self.calls {
      settings.unaryLatencyCalls = calls
      settings.pingPongRoundTrips = calls
    }
    if let duration = self.duration {
      settings.throughputSeconds = duration
      settings.streamingSeconds = duration
    }
    var leakSettings: LeakScenario.Settings = self.quick ? .quick : .full
    if let leakCalls = self.leakCalls {
      guard leakCalls > 0 else { throw ValidationError("--leak-calls takes a positive number") }
      leakSettings.calls = leakCalls
    }
    if let warmup = self.leakWarmupCalls {
      guard warmup >= 0 else { throw ValidationError("--leak-warmup-calls takes a number ≥ 0") }
      leakSettings.warmupCalls = warmup
    }
    let scenarios = try self.selectedScenarios()
    BenchMachine.describe()

    let serverProcess = self.server == nil ? try ServerProcess() : nil
    defer { serverProcess?.stop() }
    let (host, port) = try self.serverAddress(serverProcess)
    let peer = self.noGrpcio ? nil : self.grpcioPeer(port: port)

    let report = BenchReport()
    let runner = try BenchRunner(
      host: host,
      port: port,
      settings: settings,
      clients: Set(self.clients.split(separator: ",").map(String.init)),
      coalescing: try self.coalescingVariants(),
      variants: try self.selectedVariants(),
      grpcio: peer
    )
    defer { runner.close() }
    if !scenarios.isEmpty {
      try await runner.warmUp()
    }
    for scenario in scenarios {
      try await runner.run(scenario, into: report)
    }
    if scenarios.contains(.pingPong) {
      let floor = try TCPFloor.measure(roundTrips: settings.pingPongRoundTrips)
      for metric in BenchScenario.pingPong.metrics {
        report.add(
          "ping-pong",
          "tcp-loopback",
          "plain",
          metric,
          BenchScenario.pingPong.value(of: metric, in: floor)
        )
      }
    }
    // Before memory-backpressure: the memory that scenario frees stays in the allocator, and
    // calls reusing it would hide a leak.
    if self.wants("leak") {
      try await LeakScenario.run(target: "\(host):\(port)", settings: leakSettings, into: report)
    }
    if self.wants("memory-backpressure") {
      var memorySettings: MemoryBackpressure.Settings = self.quick ? .quick : .full
      if let interval = self.readIntervalMs {
        memorySettings.readInterval = .milliseconds(max(1, interval))
      }
      if let window = self.window {
        memorySettings.window = window
      }
      for flowControl in [true, false] {
        let grown = try await MemoryBackpressure.measure(
          target: "\(host):\(port)",
          flowControl: flowControl,
          settings: memorySettings
        )
        report.add(
          "memory-backpressure",
          "grpc-calls",
          flowControl ? "flow-control" : "plain",
          "peak_rss_mb",
          grown
        )
      }
    }
    if self.wants("soak", inAll: false) {
      var soak = SoakScenario.Settings()
      if let seconds = self.soakSeconds {
        guard seconds >= 2 else { throw ValidationError("--soak-seconds takes 2 or more") }
        soak.duration = .seconds(seconds)
      }
      if let inFlight = self.soakInFlight {
        guard inFlight > 0 else {
          throw ValidationError("--soak-in-flight takes a positive number")
        }
        soak.inFlight = inFlight
      }
      try await SoakScenario.run(target: "\(host):\(port)", settings: soak, into: report)
    }
    report.add("all", "bench-process", "plain", "peak_rss_mb", ResourceUsage.now().peakRSSMiB)

    Console.line(report.table())
    Console.line(
      "bench process peak RSS: \(String(format: "%.1f", ResourceUsage.now().peakRSSMiB)) MiB"
    )
    if let json = self.json {
      try report.writeJSON(to: json)
      Console.line("wrote \(report.records.count) records to \(json)")
    }
  }

  /// Whether a scenario that runs outside the runner (leak, memory-backpressure, soak) is
  /// selected.
  private func wants(_ name: Substring, inAll: Bool = true) -> Bool {
    (inAll && self.scenario == "all") || self.scenario.split(separator: ",").contains(name)
  }

  private func selectedScenarios() throws -> [BenchScenario] {
    if self.scenario == "all" { return BenchScenario.allCases }
    return try self.scenario.split(separator: ",").flatMap { name -> [BenchScenario] in
      if name == "server-streaming" { return [.serverStreaming16B, .serverStreaming64K] }
      if ["memory-backpressure", "leak", "soak"].contains(name) { return [] }
      guard let known = BenchScenario(rawValue: String(name)) else {
        throw ValidationError("unknown scenario '\(name)'")
      }
      return [known]
    }
  }

  /// `nil` for all variants.
  private func selectedVariants() throws -> Set<String>? {
    if self.variants == "all" { return nil }
    let names = Set(self.variants.split(separator: ",").map(String.init))
    if let unknown = names.subtracting(BenchRunner.variantNames).sorted().first {
      throw ValidationError(
        "unknown variant '\(unknown)': --variants takes \(BenchRunner.variantNames.joined(separator: ", ")) or all"
      )
    }
    return names
  }

  private func coalescingVariants() throws -> [Bool] {
    switch self.coalescing {
    case "on": return [true]
    case "off": return [false]
    case "both": return [true, false]
    default: throw ValidationError("--coalescing takes on, off or both")
    }
  }

  private func serverAddress(_ process: ServerProcess?) throws -> (String, Int) {
    if let process { return ("127.0.0.1", process.port) }
    let parts = (self.server ?? "").split(separator: ":")
    guard parts.count == 2, let port = Int(parts[1]) else {
      throw ValidationError("--server takes host:port")
    }
    return (String(parts[0]), port)
  }

  private func grpcioPeer(port: Int) -> GrpcioBenchPeer? {
    let python = self.python ?? ".venv-interop/bin/python"
    guard FileManager.default.isExecutableFile(atPath: python) else {
      Console.line("grpcio peer left out: no \(python) (run interop/run.sh once, or pass --python)")
      return nil
    }
    return GrpcioBenchPeer(python: python, script: "interop/python/bench.py", port: port)
  }
}
