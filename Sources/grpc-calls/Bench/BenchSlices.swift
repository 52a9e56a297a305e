internal import Foundation

/// One slice of each scenario's work, run by one client; returns what it measured.
///
/// Slices of every client alternate, so the machine's noise falls on all of them alike. A call
/// that fails is counted (``Tally/failures``) and the slice goes on: against a real server
/// (`--server`) a failure is a figure, not the end of the run.
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
      return try await self.pingPong(
        roundTrips: settings.pingPongRoundTrips / rounds,
        client: client
      )
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
        settings: settings,
        client: client
      )
    case .serverStreaming64K:
      return try await self.serverStreaming(
        size: 64 * 1024,
        seconds: settings.streamingSeconds / Double(rounds),
        settings: settings,
        client: client
      )
    }
  }

  static let oneByteUnary = BenchRequests.unary(requestBytes: 1, responseBytes: 1)

  static func warmUp(calls: Int, client: any BenchClient) async throws {
    for _ in 0 ..< calls {
      _ = try? await client.unary(self.oneByteUnary)
    }
  }

  private static func unaryLatency(calls: Int, client: any BenchClient) async throws -> Tally {
    try await self.measured { tally in
      for _ in 0 ..< calls {
        let start = ContinuousClock.now
        guard (try? await client.unary(self.oneByteUnary)) != nil else {
          tally.failures += 1
          continue
        }
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
      (tally.calls, tally.failures) = await withTaskGroup(of: (Int, Int).self) { group in
        for _ in 0 ..< concurrency {
          group.addTask {
            var (calls, failures) = (0, 0)
            while ContinuousClock.now < deadline {
              if (try? await client.unary(request)) != nil {
                calls += 1
              } else {
                failures += 1
              }
            }
            return (calls, failures)
          }
        }
        return await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
      }
    }
  }

  private static func pingPong(roundTrips: Int, client: any BenchClient) async throws -> Tally {
    let laps = LapTimer()
    let tally = try await self.measured { tally in
      do {
        try await client.pingPong(rounds: roundTrips, request: BenchRequests.ping(bytes: 1)) {
          laps.lap()
        }
      } catch {
        tally.failures += 1
      }
      tally.calls = laps.laps.count
    }
    var result = tally
    for lap in laps.laps {
      result.record(microseconds: lap)
    }
    return result
  }

  private static func largeUnary(
    calls: Int,
    inFlight: Int,
    client: any BenchClient
  ) async throws
    -> Tally
  {
    let size = 1024 * 1024
    let request = BenchRequests.unary(requestBytes: size, responseBytes: size)
    return try await self.measured { tally in
      // Each call's bytes both ways; `nil` for a call that failed.
      let call: @Sendable () async -> Int? = {
        (try? await client.unary(request)).map { $0 + request.count }
      }
      (tally.bytes, tally.calls) = await withTaskGroup(of: Int?.self) { group in
        var started = 0
        var (bytes, done) = (0, 0)
        while started < min(inFlight, calls) {
          group.addTask(operation: call)
          started += 1
        }
        while let result = await group.next() {
          if let result {
            bytes += result
            done += 1
          }
          if started < calls {
            group.addTask(operation: call)
            started += 1
          }
        }
        return (bytes, done)
      }
      tally.failures = calls - tally.calls
    }
  }

  private static func serverStreaming(
    size: Int,
    seconds: Double,
    settings: BenchSettings,
    client: any BenchClient
  )
    async throws -> Tally
  {
    let count = BenchRequests.streamCount(size: size, settings: settings)
    let request = BenchRequests.stream(count: count, size: size)
    let deadline = ContinuousClock.now + .seconds(seconds)
    return try await self.measured { tally in
      repeat {
        guard let received = try? await client.serverStream(request) else {
          tally.failures += 1
          continue
        }
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
