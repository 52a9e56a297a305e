internal import Foundation

/// Writes the tool's output lines.
///
/// Each line goes straight to standard output in one write, so scripts that read it through a
/// pipe or a file (e.g. waiting for the "listening on" line of `serve`) see it at once; `print`
/// would hold it in a block buffer when stdout is not a terminal.
enum Console {
  static func line(_ text: String) {
    do {
      try FileHandle.standardOutput.write(contentsOf: Data((text + "\n").utf8))
    } catch {
      // Nobody reads the output any more (`grpc-calls load | head -1`): end quietly, as a
      // command-line tool does on a closed pipe (SwiftNIO ignores SIGPIPE, so the write fails
      // instead of the signal ending the process).
      exit(0)
    }
  }
}
