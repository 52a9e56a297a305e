internal import Foundation

/// One slice of each scenario's work, run by one client; returns what it measured.
///
/// Slices of every client alternate, so the machine's noise falls on all of them alike.
enum BenchSlices {
  static func run(
    _ scenario: BenchScenario,
    slice: Int,
    of rounds: Int,
    settings: BenchSettings,
    client: any BenchClient
  ) async throws -> Tally {
    switch scenario {
    case .unaryLatency:
      return try await self.unaryLatency(calls: settings.unaryLatencyCalls / rounds, client: client)
    case .unaryThroughput:
      return try await self.unaryThroughput(
        seconds: settings.throughputSeconds / Double(rounds),
        concurrency: settings.concurrency,
        client: client
      )
    case .pingPong:
      return try await self.pingPong(roundTrips: settings.pingPongRoundTrips / rounds, client: client)
    case .largeUnary:
      return try await self.largeUnary(
        calls: settings.largeUnaryCalls / rounds,
        inFlight: settings.largeUnaryInFlight,
        client: client
      )
    case .serverStreaming16B:
      return try await self.serverStreaming(
        size: 16,
        seconds: settings.streamingSeconds / Double(rounds),
        client: client
      )
    case .serverStreaming64K:
      return try await self.serverStreaming(
        size: 64 * 1024,
        seconds: settings.streamingSeconds / Double(rounds),
        client: client
      )
    }
  }

  static let oneByteUnary = BenchRequests.unary(requestBytes: 1, responseBytes: 1)

  static func warmUp(calls: Int, client: any BenchClient) async throws {
    for _ in 0..<calls {
      _ = try await client.unary(self.oneByteUnary)
    }
  }

  private static func unaryLatency(calls: Int, client: any BenchClient) async throws -> Tally {
    try await self.measured { tally in
      for _ in 0..<calls {
        let start = ContinuousClock.now
        _ = try await client.unary(self.oneByteUnary)
        tally.record(microseconds: microseconds(since: start))
        tally.calls += 1
      }
    }
  }

  private static func unaryThroughput(
    seconds: Double,
    concurrency: Int,
    client: any BenchClient
  ) async throws -> Tally {
    let request = BenchRequests.unary(requestBytes: 1024, responseBytes: 1024)
    let deadline = ContinuousClock.now + .seconds(seconds)
    return try await self.measured { tally in
      tally.calls = try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<concurrency {
          group.addTask {
            var calls = 0
            while ContinuousClock.now < deadline {
              _ = try await client.unary(request)
              calls += 1
            }
            return calls
          }
        }
        return try await group.reduce(0, +)
      }
    }
  }

  private static func pingPong(roundTrips: Int, client: any BenchClient) async throws -> Tally {
    let laps = LapTimer()
    let tally = try await self.measured { tally in
      try await client.pingPong(rounds: roundTrips, request: BenchRequests.ping(bytes: 1)) {
        laps.lap()
      }
      tally.calls = roundTrips
    }
    var result = tally
    for lap in laps.laps {
      result.record(microseconds: lap)
    }
    return result
  }

  private static func largeUnary(calls: Int, inFlight: Int, client: any BenchClient) async throws
    -> Tally
  {
    let size = 1024 * 1024
    let request = BenchRequests.unary(requestBytes: size, responseBytes: size)
    return try await self.measured { tally in
      tally.bytes = try await withThrowingTaskGroup(of: Int.self) { group in
        var started = 0
        var bytes = 0
        while started < min(inFlight, calls) {
          group.addTask { try await client.unary(request) + request.count }
          started += 1
        }
        while let done = try await group.next() {
          bytes += done
          if started < calls {
            group.addTask { try await client.unary(request) + request.count }
            started += 1
          }
        }
        return bytes
      }
      tally.calls = calls
    }
  }

  private static func serverStreaming(size: Int, seconds: Double, client: any BenchClient)
    async throws -> Tally
  {
    let request = BenchRequests.stream(count: BenchRequests.streamCount(size: size), size: size)
    let deadline = ContinuousClock.now + .seconds(seconds)
    return try await self.measured { tally in
      repeat {
        let received = try await client.serverStream(request)
        tally.messages += received.messages
        tally.bytes += received.messages * size
      } while ContinuousClock.now < deadline
    }
  }

  /// Runs `body`, adding its wall-clock and CPU time to the tally.
  private static func measured(_ body: (inout Tally) async throws -> Void) async throws -> Tally {
    var tally = Tally()
    let usage = ResourceUsage.now()
    let start = ContinuousClock.now
    try await body(&tally)
    tally.seconds = BenchClock.seconds(ContinuousClock.now - start)
    tally.addUsage(since: usage)
    return tally
  }
}

enum BenchClock {
  static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }
}
