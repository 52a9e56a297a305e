import Foundation
import GRPCCallsInterop
import Testing

#if canImport(Glibc)
import GRPCCalls
import Glibc
#endif

/// The `grpc-calls` tool run as a child process, with its output (standard output and error) read
/// line by line.
///
/// For measurements that must not share a process with the other suites (memory): the test
/// runner runs suites in parallel in one process.
final class ToolProcess: Sendable {
  private let process: Process
  private let input: Pipe
  private let output = LockedValue(Data())
  /// Whether the tool's output reached its end: it exited (or closed its standard output).
  private let outputEnded = LockedValue(false)

  /// Starts `grpc-calls` with `arguments`.
  init(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = try Self.toolURL()
    process.arguments = arguments
    let input = Pipe()
    let output = Pipe()
    process.standardInput = input
    process.standardOutput = output
    // Its standard error too, so that a failure quotes what it said before it ended (an
    // assertion, a backtrace); the lines the tests wait for all go to standard output.
    process.standardError = output
    self.process = process
    self.input = input
    try process.run()
    // A thread of its own reads the output until the tool exits, then lets the pipe go. Not
    // `readabilityHandler`: on Linux its dispatch source fires without end once the tool has
    // exited, and watches a descriptor that the pipe closes when it is released, which the
    // process may by then have reused for a socket.
    let collected = self.output
    let ended = self.outputEnded
    Thread.detachNewThread {
      while true {
        let data = output.fileHandleForReading.availableData
        guard !data.isEmpty else { break }
        collected.withLock { $0.append(data) }
      }
      ended.withLock { $0 = true }
    }
  }

  /// The tool beside the test bundle: `swift build --build-tests` and `swift test` build both.
  static func toolURL() throws -> URL {
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("grpc-calls")
    let fromSources = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent(".build/debug/grpc-calls")
    let found = [beside, fromSources].first {
      FileManager.default.isExecutableFile(atPath: $0.path)
    }
    return try #require(found, "the grpc-calls tool is not built: run swift build --build-tests")
  }

  /// The next line that starts with `prefix`, waiting up to `seconds` for it.
  ///
  /// - Throws: When the tool exits without writing it (a crash reports its signal at once,
  ///   rather than after `seconds`), or when `seconds` pass.
  func line(
    startingWith prefix: String,
    upTo seconds: Double = CloseWait.seconds
  ) async throws -> String {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while ContinuousClock.now < deadline {
      // Read before the text: output that ended holds every line the tool wrote.
      let ended = self.outputEnded.withLock { $0 }
      let text = self.outputText
      if let line = text.split(separator: "\n").first(where: { $0.hasPrefix(prefix) }) {
        return String(line)
      }
      if ended {
        while self.process.isRunning, ContinuousClock.now < deadline {
          try await Task.sleep(for: .milliseconds(10))
        }
        guard !self.process.isRunning else { break }
        let how = self.process.terminationReason == .uncaughtSignal ? "signal" : "status"
        throw ToolFailure(
          description:
            "grpc-calls ended (\(how) \(self.process.terminationStatus)) without a line starting with '\(prefix)'; output: \(text)"
        )
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    let text = self.outputText
    throw ToolFailure(
      description: "no line starting with '\(prefix)' within \(seconds) s; output: \(text)"
    )
  }

  /// Everything the tool wrote so far (standard output and error).
  var outputText: String {
    String(decoding: self.output.withLock { $0 }, as: UTF8.self)
  }

  /// Writes a line to the tool's standard input.
  func send(_ line: String) {
    self.input.fileHandleForWriting.write(Data((line + "\n").utf8))
  }

  /// Waits for the tool to exit and returns its status; terminates it after `seconds`.
  func waitForExit(upTo seconds: Double = CloseWait.seconds) async throws -> Int32 {
    if let status = await self.exitStatus(upTo: seconds) {
      return status
    }
    self.process.terminate()
    throw ToolFailure(description: "grpc-calls did not exit within \(seconds) s")
  }

  /// Kills the tool with SIGKILL, as a crash or the OOM killer would: no shutdown, no GOAWAY;
  /// the kernel closes its sockets. Returns once it has exited (a test issue after 60 s).
  func kill() async {
    Glibc.kill(self.process.processIdentifier, SIGKILL)
    if await self.exitStatus(upTo: 60) == nil {
      Issue.record(
        "grpc-calls \(self.process.processIdentifier) did not exit within 60 s of SIGKILL"
      )
    }
  }

  /// The tool's exit status once it has exited, or `nil` after `seconds`.
  ///
  /// Foundation's `Process` learns of the exit from a SIGCHLD watcher of its own; the child is
  /// also polled with `waitpid` so that a missed notification cannot leave a test waiting for
  /// good (whichever reaps the child first, the other sees it gone).
  private func exitStatus(upTo seconds: Double) async -> Int32? {
    let deadline = ContinuousClock.now + .seconds(seconds)
    let pid = self.process.processIdentifier
    var gone: ContinuousClock.Instant?
    while ContinuousClock.now < deadline {
      if !self.process.isRunning {
        return self.process.terminationStatus
      }
      var status: Int32 = 0
      let reaped = waitpid(pid, &status, WNOHANG)
      if reaped == pid {
        // Exited: the status word's low 7 bits are the signal, the next 8 the exit code.
        let signal = status & 0x7f
        return signal == 0 ? (status >> 8) & 0xff : signal
      }
      if reaped == -1, errno == ECHILD {
        // Reaped by Foundation, which has not said so yet: give it a moment, then report the
        // exit with an unknown status rather than wait on.
        gone = gone ?? ContinuousClock.now
        if ContinuousClock.now - gone! > .seconds(1) { return -1 }
      }
      try? await Task.sleep(for: .milliseconds(10))
    }
    return nil
  }

  deinit {
    if self.process.isRunning {
      self.process.terminate()
    }
  }
}

struct ToolFailure: Error, CustomStringConvertible {
  var description: String
}

extension String {
  /// The integer value of `key=<n>` in a line of `key=value` fields.
  func field(_ key: String) -> Int? {
    self.split(separator: " ").lazy.compactMap { part -> Int? in
      let pieces = part.split(separator: "=", maxSplits: 1)
      return pieces.count == 2 && pieces[0] == key ? Int(pieces[1]) : nil
    }.first
  }
}
