internal import GRPCCallsInterop

/// Runs cases one after another, printing a line per case and a summary line.
enum InteropRunner {
  struct Summary {
    var passed = 0
    var failed = 0
    var unsupported = 0

    mutating func add(_ other: Summary) {
      self.passed += other.passed
      self.failed += other.failed
      self.unsupported += other.unsupported
    }
  }

  static func run(
    _ cases: [InteropTestCase],
    with client: InteropClient,
    apis: [InteropClient.API]
  ) async -> Summary {
    await self.run(
      cases.compactMap { InteropCaseName($0.rawValue) },
      with: client,
      apis: apis,
      usesCache: false
    )
  }

  /// Runs every case through each of `apis` (the API is named on each line when there are
  /// several), then prints one summary line. `cacheable_unary` runs once, through `GRPCCall2`,
  /// when the client's options carry a response cache (`usesCache`).
  static func run(
    _ cases: [InteropCaseName],
    with client: InteropClient,
    apis: [InteropClient.API],
    usesCache: Bool
  ) async -> Summary {
    var summary = Summary()
    for api in apis {
      let label = apis.count > 1 ? " [\(api.rawValue)]" : ""
      summary.add(
        await self.run(cases.filter { !$0.isCacheable }, with: client, api: api, label: label)
      )
    }
    if cases.contains(where: \.isCacheable) {
      summary.add(await self.runCacheable(with: client, usesCache: usesCache))
    }
    var line = "\(summary.passed) passed, \(summary.failed) failed"
    if summary.unsupported > 0 {
      line += ", \(summary.unsupported) skipped"
    }
    Console.line(line)
    return summary
  }

  private static func run(
    _ cases: [InteropCaseName],
    with client: InteropClient,
    api: InteropClient.API,
    label: String
  ) async -> Summary {
    var summary = Summary()
    for testCase in cases {
      switch testCase.kind {
      case .cacheable:
        break
      case .unsupported(let reason):
        summary.unsupported += 1
        Console.line("SKIP  \(testCase.name)\(label): not supported yet (\(reason))")
      case .supported(let runnable):
        summary.add(
          await Self.outcome("\(testCase.name)\(label)") {
            try await client.run(runnable, api: api)
          }
        )
      }
    }
    return summary
  }

  private static func runCacheable(with client: InteropClient, usesCache: Bool) async -> Summary {
    var summary = Summary()
    guard usesCache else {
      summary.unsupported += 1
      Console.line(
        "SKIP  cacheable_unary: needs a response cache in front of the server; pass --use_cache to run it through the client's own"
      )
      return summary
    }
    return await Self.outcome("cacheable_unary [raw, cached]") { try await client.cacheableUnary() }
  }

  /// Runs one case and prints its PASS or FAIL line.
  private static func outcome(_ name: String, _ body: () async throws -> Void) async -> Summary {
    var summary = Summary()
    let start = ContinuousClock.now
    do {
      try await body()
      summary.passed += 1
      Console.line("PASS  \(name) (\(Self.milliseconds(since: start)) ms)")
    } catch {
      summary.failed += 1
      Console.line("FAIL  \(name): \(error)")
    }
    return summary
  }

  private static func milliseconds(since start: ContinuousClock.Instant) -> Int {
    let elapsed = ContinuousClock.now - start
    return Int(
      elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
    )
  }
}
