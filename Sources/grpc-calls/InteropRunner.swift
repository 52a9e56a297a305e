internal import GRPCCallsInterop

/// Runs cases one after another, printing a line per case and a summary line.
enum InteropRunner {
  struct Summary {
    var passed = 0
    var failed = 0
    var unsupported = 0
  }

  static func run(_ cases: [InteropTestCase], with client: InteropClient) async -> Summary {
    await self.run(cases.compactMap { InteropCaseName($0.rawValue) }, with: client)
  }

  static func run(_ cases: [InteropCaseName], with client: InteropClient) async -> Summary {
    var summary = Summary()
    for testCase in cases {
      let start = ContinuousClock.now
      switch testCase.kind {
      case .unsupported(let reason):
        summary.unsupported += 1
        Console.line("SKIP  \(testCase.name): not supported yet (\(reason))")
      case .supported(let runnable):
        do {
          try await client.run(runnable)
          summary.passed += 1
          Console.line("PASS  \(testCase.name) (\(Self.milliseconds(since: start)) ms)")
        } catch {
          summary.failed += 1
          Console.line("FAIL  \(testCase.name): \(error)")
        }
      }
    }
    var line = "\(summary.passed) passed, \(summary.failed) failed"
    if summary.unsupported > 0 {
      line += ", \(summary.unsupported) skipped"
    }
    Console.line(line)
    return summary
  }

  private static func milliseconds(since start: ContinuousClock.Instant) -> Int {
    let elapsed = ContinuousClock.now - start
    return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
  }
}
