internal import GRPCCallsInterop

/// Runs cases one after another, printing a line per case and a summary line.
enum InteropRunner {
  struct Summary {
    var passed = 0
    var failed = 0
  }

  static func run(_ cases: [InteropTestCase], with client: InteropClient) async -> Summary {
    var summary = Summary()
    for testCase in cases {
      let start = ContinuousClock.now
      do {
        try await client.run(testCase)
        summary.passed += 1
        print("PASS  \(testCase.rawValue) (\(Self.milliseconds(since: start)) ms)")
      } catch {
        summary.failed += 1
        print("FAIL  \(testCase.rawValue): \(error)")
      }
    }
    print("\(summary.passed) passed, \(summary.failed) failed")
    return summary
  }

  private static func milliseconds(since start: ContinuousClock.Instant) -> Int {
    let elapsed = ContinuousClock.now - start
    return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
  }
}
