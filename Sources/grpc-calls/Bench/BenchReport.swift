internal import Foundation

/// One figure: the unit of `--json` output. The field names and meanings are a stable format
/// that other tools read (see the Benchmarks article of GRPCCalls).
struct BenchRecord: Codable, Sendable {
  var scenario: String
  var client: String
  var variant: String
  var metric: String
  var value: Double
}

/// Collects figures and prints them side by side, with the ratio of ours to each peer.
final class BenchReport {
  private(set) var records: [BenchRecord] = []

  static let ours = "grpc-calls"
  static let columns = [
    "grpc-calls", "grpc-calls-async", "grpc-swift-2", "grpc-swift-2-proto", "raw-transport",
    "grpcio", "tcp-loopback",
  ]

  func add(
    _ scenario: String,
    _ client: String,
    _ variant: String,
    _ metric: String,
    _ value: Double
  ) {
    self.records.append(
      BenchRecord(
        scenario: scenario,
        client: client,
        variant: variant,
        metric: metric,
        value: value
      )
    )
  }

  /// A table with a row per scenario, variant and metric; a column per client; then ratios.
  func table() -> String {
    struct RowKey: Hashable {
      var scenario: String
      var variant: String
      var metric: String
    }
    var rows: [RowKey] = []
    var values: [RowKey: [String: Double]] = [:]
    // Process-wide figures (e.g. peak RSS) are printed on their own line, not in the table.
    for record in self.records where Self.columns.contains(record.client) {
      // grpcio has one variant ("plain"); show it on every Swift variant's row for the ratio.
      let variants =
        record.client == "grpcio" || record.client == "tcp-loopback"
        ? self.variants(of: record.scenario, default: record.variant)
        : [record.variant]
      for variant in variants {
        let key = RowKey(scenario: record.scenario, variant: variant, metric: record.metric)
        if values[key] == nil { rows.append(key) }
        values[key, default: [:]][record.client] = record.value
      }
    }
    let peers = Self.columns.dropFirst().filter { peer in
      self.records.contains { $0.client == peer }
    }
    var header = ["scenario", "variant", "metric", Self.ours] + peers
    header += peers.map { "ours/\($0)" }
    var lines = [header]
    for key in rows {
      let row = values[key] ?? [:]
      var line = [key.scenario, key.variant, key.metric, Self.format(row[Self.ours])]
      line += peers.map { Self.format(row[$0]) }
      line += peers.map { peer in
        guard let ours = row[Self.ours], let theirs = row[peer], theirs != 0 else { return "-" }
        return String(format: "%.2f", ours / theirs)
      }
      lines.append(line)
    }
    return Self.align(lines)
  }

  func writeJSON(to path: String) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
    try encoder.encode(self.records).write(to: URL(fileURLWithPath: path))
  }

  private func variants(of scenario: String, default variant: String) -> [String] {
    var seen: [String] = []
    for record in self.records where record.scenario == scenario && record.client == Self.ours {
      if !seen.contains(record.variant) { seen.append(record.variant) }
    }
    return seen.isEmpty ? [variant] : seen
  }

  private static func format(_ value: Double?) -> String {
    guard let value else { return "-" }
    if value >= 1000 { return String(format: "%.0f", value) }
    if value >= 10 { return String(format: "%.1f", value) }
    return String(format: "%.3f", value)
  }

  private static func align(_ lines: [[String]]) -> String {
    let widths = (0 ..< (lines.first?.count ?? 0)).map { column in
      lines.map { $0[column].count }.max() ?? 0
    }
    return lines.map { line in
      zip(line, widths).enumerated().map { index, cell in
        let padding = String(repeating: " ", count: cell.1 - cell.0.count)
        return index < 3 ? cell.0 + padding : padding + cell.0
      }.joined(separator: "  ")
    }.joined(separator: "\n")
  }
}
