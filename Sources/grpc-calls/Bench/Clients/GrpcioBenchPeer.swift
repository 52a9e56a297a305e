internal import Dispatch
internal import Foundation

/// Python's grpcio (gRPC C core) as a bench peer: `interop/python/bench.py`, kept running and
/// given one slice at a time, so its figures come from the same alternating rounds.
final class GrpcioBenchPeer: @unchecked Sendable {
  // @unchecked: the process and pipes are used by one slice at a time (the bench runs slices
  // sequentially), never concurrently.
  private let process = Process()
  private let input = Pipe()
  private let output = Pipe()
  private var buffer = Data()
  let port: Int

  /// Starts the peer, or returns nil when `python` cannot import grpcio.
  init?(python: String, script: String, port: Int) {
    self.port = port
    self.process.executableURL = URL(fileURLWithPath: python)
    self.process.arguments = [script]
    self.process.standardInput = self.input
    self.process.standardOutput = self.output
    self.process.standardError = FileHandle.standardError
    do {
      try self.process.run()
    } catch {
      return nil
    }
  }

  deinit {
    self.input.fileHandleForWriting.closeFile()
    if self.process.isRunning { self.process.terminate() }
  }

  /// Runs one slice and returns what the peer measured.
  func run(
    _ scenario: BenchScenario,
    slice: Int,
    of rounds: Int,
    settings: BenchSettings
  ) async throws -> Tally {
    var command: [String: Any] = ["scenario": scenario.rawValue, "port": self.port]
    switch scenario {
    case .unaryLatency: command["calls"] = settings.unaryLatencyCalls / rounds
    case .unaryThroughput:
      command["seconds"] = settings.throughputSeconds / Double(rounds)
      command["concurrency"] = settings.concurrency
    case .pingPong: command["calls"] = settings.pingPongRoundTrips / rounds
    case .largeUnary:
      command["calls"] = settings.largeUnaryCalls / rounds
      command["in_flight"] = settings.largeUnaryInFlight
    case .serverStreaming16B, .serverStreaming64K:
      command["seconds"] = settings.streamingSeconds / Double(rounds)
      let size = scenario == .serverStreaming16B ? 16 : 64 * 1024
      command["size"] = size
      command["count"] = BenchRequests.streamCount(size: size, settings: settings)
    }
    var line = try JSONSerialization.data(withJSONObject: command)
    line.append(UInt8(ascii: "\n"))
    self.input.fileHandleForWriting.write(line)
    return try Self.tally(from: try await self.readLine())
  }

  private func readLine() async throws -> Data {
    try await withCheckedThrowingContinuation { continuation in
      // Blocking reads stay off the concurrency pool.
      DispatchQueue.global().async {
        while true {
          if let newline = self.buffer.firstIndex(of: UInt8(ascii: "\n")) {
            let line = self.buffer[..<newline]
            self.buffer = Data(self.buffer[self.buffer.index(after: newline)...])
            continuation.resume(returning: Data(line))
            return
          }
          let chunk = self.output.fileHandleForReading.availableData
          if chunk.isEmpty {
            continuation.resume(throwing: BenchFailure(description: "the grpcio peer exited"))
            return
          }
          self.buffer.append(chunk)
        }
      }
    }
  }

  private static func tally(from line: Data) throws -> Tally {
    guard let result = try JSONSerialization.jsonObject(with: line) as? [String: Any] else {
      throw BenchFailure(description: "the grpcio peer sent something that is not JSON")
    }
    if let error = result["error"] as? String {
      throw BenchFailure(description: "grpcio peer: \(error)")
    }
    var tally = Tally()
    for latency in result["latencies_us"] as? [Int] ?? [] {
      tally.record(microseconds: UInt64(Swift.max(0, latency)))
    }
    tally.calls = result["calls"] as? Int ?? 0
    tally.messages = result["messages"] as? Int ?? 0
    tally.bytes = result["bytes"] as? Int ?? 0
    tally.seconds = result["seconds"] as? Double ?? 0
    tally.cpuSeconds = result["cpu_seconds"] as? Double ?? 0
    tally.contextSwitches = result["context_switches"] as? Int ?? 0
    return tally
  }
}
