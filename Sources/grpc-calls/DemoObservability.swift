internal import CoreMetrics
internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterceptors
internal import InMemoryLogging
internal import InMemoryTracing
internal import Logging
internal import Prometheus
internal import Tracing

/// The demo's second pass: the logging, metrics and tracing interceptors installed globally,
/// each with a real backend (swift-log, Prometheus, swift-distributed-tracing's in-memory
/// tracer), and a one-line summary of what they recorded.
struct DemoObservability {
  let registry = PrometheusCollectorRegistry()
  let logs = InMemoryLogHandler()
  let tracer = InMemoryTracer()

  /// The three factories, in the order they are registered.
  var factories: [any GRPCInterceptorFactory] {
    var logger = Logger(label: "grpc-calls.demo") { _ in self.logs }
    logger.logLevel = .debug
    return [
      GRPCLoggingInterceptorFactory(logger: logger),
      GRPCMetricsInterceptorFactory(
        factory: PrometheusMetricsFactory.openTelemetryNames(registry: self.registry)
      ),
      GRPCTracingInterceptorFactory(tracer: self.tracer),
    ]
  }

  /// What the interceptors recorded, read back from each backend.
  struct Summary {
    var metrics: PrometheusText
    var logRecords: Int
    var spans: Int
    var failedSpans: Int

    var started: Double { self.metrics.sum("rpc_client_started") }
    var finished: Double { self.metrics.sum("rpc_client_finished") }
    var inFlight: Double { self.metrics.sum("rpc_client_in_flight") }

    /// Whether every call the interceptors saw start also closed, once, in every backend.
    var isConsistent: Bool {
      self.started > 0 && self.started == self.finished && self.inFlight == 0
        && Double(self.spans) == self.started && Double(self.logRecords) == 2 * self.started
    }

    var line: String {
      let codes = self.metrics.sums("rpc_client_finished", by: "rpc_grpc_status_code")
        .sorted { Int($0.key) ?? 0 < Int($1.key) ?? 0 }
        .map { "\($0.key): \(Int($0.value))" }
        .joined(separator: ", ")
      let count = self.metrics.sum("rpc_client_duration_count")
      let mean = count > 0 ? self.metrics.sum("rpc_client_duration_sum") / count * 1000 : 0
      return "metrics (Prometheus): rpc_client_started \(Int(self.started)), rpc_client_finished "
        + "\(Int(self.finished)) by status code {\(codes)}, rpc_client_in_flight \(Int(self.inFlight)), "
        + "rpc_client_duration mean \(String(format: "%.1f", mean)) ms; "
        + "\(self.logRecords) log records; \(self.spans) spans (\(self.failedSpans) with an error status)"
    }
  }

  func summary() -> Summary {
    let spans = self.tracer.finishedSpans
    return Summary(
      metrics: PrometheusText(self.registry.emitToString()),
      logRecords: self.logs.entries.count,
      spans: spans.count,
      failedSpans: spans.filter { $0.status?.code == .error }.count
    )
  }
}

/// Prometheus' text exposition format, read back into samples for a summary.
struct PrometheusText {
  struct Sample {
    var name: String
    var labels: [String: String]
    var value: Double
  }

  let samples: [Sample]

  init(_ text: String) {
    self.samples = text.split(separator: "\n").compactMap(Self.sample(from:))
  }

  /// The sum of a metric's samples over every label set.
  func sum(_ name: String) -> Double {
    self.samples.lazy.filter { $0.name == name }.map(\.value).reduce(0, +)
  }

  /// The sums of a metric's samples, one per value of `label`.
  func sums(_ name: String, by label: String) -> [String: Double] {
    self.samples.filter { $0.name == name }.reduce(into: [:]) { sums, sample in
      sums[sample.labels[label] ?? "", default: 0] += sample.value
    }
  }

  /// `name{a="x",b="y"} 12` or `name 12`; comments and blank lines give `nil`.
  private static func sample(from line: Substring) -> Sample? {
    guard !line.hasPrefix("#"), let space = line.lastIndex(of: " "),
      let value = Double(line[line.index(after: space)...])
    else { return nil }
    let series = line[..<space]
    guard let brace = series.firstIndex(of: "{") else {
      return Sample(name: String(series), labels: [:], value: value)
    }
    var labels: [String: String] = [:]
    // Our label values (service and method names, codes) hold no commas or quotes.
    for pair in series[series.index(after: brace)...].dropLast().split(separator: ",") {
      let parts = pair.split(separator: "=", maxSplits: 1)
      guard parts.count == 2 else { continue }
      let quoted = parts[1]
      labels[String(parts[0])] = String(
        quoted.hasPrefix("\"") ? quoted.dropFirst().dropLast() : quoted
      )
    }
    return Sample(name: String(series[..<brace]), labels: labels, value: value)
  }
}
