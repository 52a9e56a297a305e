internal import ArgumentParser
internal import Foundation
internal import GRPCCalls
internal import GRPCCallsTestSupport

/// `grpc-calls cancellation`: cancelled streaming calls against a server that records how each
/// handler ended (interop/python/server.py and interop/go's server with `--events FILE`).
///
/// Every cancelled call must reach the server as a reset (RST_STREAM(CANCEL), no END_STREAM
/// before it, read from the client's bytes through a recording proxy) and its handler must see a
/// cancellation, never a complete request stream (the server's own record). Each run cancels
/// both streaming methods by every trigger (``CancellationProbe/Trigger``) on both paths to the
/// core; every probe must pass.
struct Cancellation: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract:
      "Cancel streaming calls every way the library can; check the wire and the server's record of each."
  )

  @Option(
    name: .customLong("server_port"),
    help: "The server's port on 127.0.0.1 (plaintext: the proxy reads the client's frames)."
  )
  var serverPort: Int

  @Option(
    help:
      "The file the server appends 'ID METHOD OUTCOME' to for each RPC with x-grpc-calls-test-id (its --events)."
  )
  var events: String

  @Option(help: "Runs; each cancels both streaming methods by every trigger on both paths.")
  var runs = 100

  @Option(name: .customLong("in-flight"), help: "Probes in flight at once.")
  var inFlight = 8

  @Option(help: "The deadline of the deadline trigger's calls, in seconds.")
  var deadline = 1.0

  func validate() throws {
    guard self.runs > 0, self.inFlight > 0, self.deadline > 0 else {
      throw ValidationError("--runs, --in-flight and --deadline must be positive")
    }
  }

  func run() async throws {
    let log = ServerEventLog(path: self.events)
    var probes: [(path: RPCPath, probe: CancellationProbe)] = []
    for _ in 0 ..< self.runs {
      for path in RPCPath.allCases {
        for trigger in CancellationProbe.Trigger.allCases {
          for method in CancellationProbe.methods {
            probes.append(
              (path, CancellationProbe(trigger: trigger, method: method, deadline: self.deadline))
            )
          }
        }
      }
    }
    let port = self.serverPort
    let started = ContinuousClock.now
    var failed = 0
    await withTaskGroup(of: String?.self) { group in
      var next = probes.makeIterator()
      func addNext() -> Bool {
        guard let (path, probe) = next.next() else { return false }
        group.addTask { await Self.check(probe, path: path, serverPort: port, log: log) }
        return true
      }
      for _ in 0 ..< self.inFlight where !addNext() { break }
      for await failure in group {
        if let failure {
          failed += 1
          Console.line(failure)
        }
        _ = addNext()
      }
    }
    let seconds = (ContinuousClock.now - started) / .seconds(1)
    Console.line(
      "cancellation: \(probes.count - failed) ok, \(failed) failed"
        + " (\(self.runs) runs of \(probes.count / self.runs) probes, \(String(format: "%.1f", seconds)) s)"
    )
    if failed > 0 {
      throw ExitCode.failure
    }
  }

  /// Runs one probe through a recording proxy of its own; returns what went wrong, or `nil`.
  private static func check(
    _ probe: CancellationProbe,
    path: RPCPath,
    serverPort: Int,
    log: ServerEventLog
  ) async -> String? {
    let name =
      "cancellation \(path.rawValue) \(probe.trigger.rawValue) \(probe.method) \(probe.testID)"
    var config = GRPCChannelPool.Config.defaults
    config.sendsEveryCallThroughClient = path == .client
    let pool = GRPCChannelPool(config: config)
    defer { pool.disconnectAll() }
    do {
      let proxy = try FaultProxy(upstreamPort: serverPort, recordingClientBytes: true)
      defer { proxy.close() }
      var options = GRPCCallOptions()
      options.transportType = .insecure
      options.timeout = CloseWait.seconds
      let error = try await probe.run(
        target: "127.0.0.1:\(proxy.port)",
        options: options,
        pool: pool
      ) {
        // The request reached the server's socket: the server can only see its stream end
        // through what the cancel sends next.
        _ = await eventually {
          proxy.clientFrames.contains { $0.isData && $0.length > 0 } ? true : nil
        }
      }
      // The server writes its record once the handler has seen the cancel, after the proxy
      // passed the reset on: by then the proxy holds every frame the client sent.
      let outcome = await eventually { log.outcome(testID: probe.testID) }
      let problems = probe.problems(
        error: error,
        frames: proxy.clientFrames,
        serverOutcome: outcome
      )
      return problems.isEmpty ? nil : "\(name): FAILED: \(problems.joined(separator: "; "))"
    } catch {
      return "\(name): FAILED: \(error)"
    }
  }
}

/// The `--events` file of an interop test server, read as it grows: one "ID METHOD OUTCOME"
/// line per recorded RPC.
final class ServerEventLog: Sendable {
  private let path: String
  private let state = LockedValue(State())

  private struct State {
    var read = 0
    var partial = Data()
    var outcomes: [String: String] = [:]
  }

  init(path: String) {
    self.path = path
  }

  /// The outcome the server recorded for the RPC named `testID`, if it has yet.
  func outcome(testID: String) -> String? {
    self.state.withLock { state in
      if state.outcomes[testID] == nil {
        self.readNewLines(&state)
      }
      return state.outcomes[testID]
    }
  }

  private func readNewLines(_ state: inout State) {
    guard let file = FileHandle(forReadingAtPath: self.path) else { return }
    defer { try? file.close() }
    guard (try? file.seek(toOffset: UInt64(state.read))) != nil,
      let data = try? file.readToEnd(), !data.isEmpty
    else { return }
    state.read += data.count
    state.partial.append(data)
    // Each record is written whole: everything up to the last newline is complete lines.
    guard let end = state.partial.lastIndex(of: UInt8(ascii: "\n")) else { return }
    let lines = String(decoding: state.partial[..<end], as: UTF8.self).split(separator: "\n")
    state.partial = Data(state.partial[(end + 1)...])
    for line in lines {
      let fields = line.split(separator: " ", maxSplits: 2)
      guard fields.count == 3 else { continue }
      state.outcomes[String(fields[0])] = String(fields[2])
    }
  }
}
