internal import Foundation
internal import GRPCCore

/// What one fault did to the probe load: the table row `grpc-calls faults` prints.
struct FaultReport: Sendable {
  let scenario: String
  /// Calls that failed: those the fault caught.
  let failed: Int
  let succeeded: Int
  /// The codes of the failed calls, most frequent first.
  let codes: [(RPCError.Code, Int)]
  /// From the fault to the first call that failed because of it; `nil` if none failed.
  let detected: Duration?
  /// From the fault's end to the first success of a call made after it; `nil` if none came.
  let recovered: Duration?
  /// Calls lost beyond those the fault failed: calls made after the fault's end that failed,
  /// calls that never closed, and calls that closed more than once. Must be 0.
  let lost: Int
  /// The distinct messages of the failed calls.
  let messages: [String]

  init(
    scenario: String,
    records: [ProbeLoad.Record],
    injected: ContinuousClock.Instant,
    removed: ContinuousClock.Instant
  ) {
    self.scenario = scenario
    let failures = records.filter { $0.end != nil && $0.code != nil }
    self.failed = failures.count
    self.succeeded = records.count { $0.end != nil && $0.code == nil }
    var counts: [RPCError.Code: Int] = [:]
    for failure in failures { counts[failure.code!, default: 0] += 1 }
    self.codes = counts.sorted { $0.value > $1.value }.map { ($0.key, $0.value) }
    self.detected = failures.compactMap(\.end).filter { $0 >= injected }.min().map { $0 - injected }
    self.recovered = records.filter { $0.start >= removed && $0.end != nil && $0.code == nil }
      .compactMap(\.end).min().map { $0 - removed }
    self.lost =
      failures.count { $0.start >= removed } + records.count { $0.end == nil || $0.closes > 1 }
    var seen = Set<String>()
    self.messages = failures.compactMap(\.message).filter { seen.insert($0).inserted }
  }

  /// What the client did, in words.
  var behaviour: String {
    guard self.failed > 0 else { return "no call failed (\(self.succeeded) succeeded)" }
    let codes = self.codes.map { "\($0.0) ×\($0.1)" }.joined(separator: ", ")
    return "\(self.failed) failed (\(codes)); \(self.succeeded) succeeded"
  }

  var progressLine: String {
    "\(self.scenario): \(self.behaviour); detected \(Self.format(self.detected)), recovered \(Self.format(self.recovered)), lost \(self.lost)"
  }

  static func format(_ duration: Duration?) -> String {
    guard let duration else { return "—" }
    let milliseconds =
      Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    return milliseconds < 1000
      ? "\(Int(milliseconds.rounded())) ms" : String(format: "%.1f s", milliseconds / 1000)
  }

  /// The table, in Markdown.
  static func table(_ reports: [FaultReport]) -> [String] {
    [
      "| fault | what the client did | time to detect | time to recover | calls lost |",
      "|---|---|---|---|---|",
    ]
      + reports.map {
        "| \($0.scenario) | \($0.behaviour) | \(Self.format($0.detected)) | \(Self.format($0.recovered)) | \($0.lost) |"
      }
  }
}
