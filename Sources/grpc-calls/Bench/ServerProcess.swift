internal import Foundation

#if canImport(Glibc)
internal import Glibc
#endif

/// The interop server in a process of its own (this binary's `serve`): so that the bench's CPU
/// figures count the clients only, and so that `faults` can kill it.
final class ServerProcess {
  private let process = Process()
  let port: Int

  /// Starts `serve` on `port` (0: a free one).
  ///
  /// - Parameter compression: Off by default, like the grpcio server: the bench measures call
  ///   paths, not zlib.
  init(port: Int = 0, compression: Bool = false) throws {
    let output = Pipe()
    self.process.executableURL = Self.ownExecutable()
    self.process.arguments =
      ["serve", "--host", "127.0.0.1", "--port", "\(port)"]
      + (compression ? [] : ["--no-compression"])
    self.process.standardOutput = output
    try self.process.run()

    var text = ""
    let deadline = Date().addingTimeInterval(30)
    while Date() < deadline {
      let chunk = output.fileHandleForReading.availableData
      guard !chunk.isEmpty else { break }
      text += String(decoding: chunk, as: UTF8.self)
      if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on") }),
        let port = line.split(separator: ":").last.flatMap({ Int($0) })
      {
        self.port = port
        return
      }
    }
    self.process.terminate()
    throw BenchFailure(description: "the bench server did not start: \(text)")
  }

  /// Kills the server with SIGKILL, as a crash would: no GOAWAY, the kernel resets its
  /// connections.
  func kill() {
    if self.process.isRunning {
      Glibc.kill(self.process.processIdentifier, SIGKILL)
      self.process.waitUntilExit()
    }
  }

  func stop() {
    if self.process.isRunning {
      self.process.terminate()
      self.process.waitUntilExit()
    }
  }

  private static func ownExecutable() -> URL {
    #if os(Linux)
    return URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    #else
    return URL(fileURLWithPath: CommandLine.arguments[0])
    #endif
  }
}
