internal import Foundation

/// Writes the tool's output lines.
///
/// Each line goes straight to standard output in one write, so scripts that read it through a
/// pipe or a file (e.g. waiting for the "listening on" line of `serve`) see it at once; `print`
/// would hold it in a block buffer when stdout is not a terminal.
enum Console {
  static func line(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
  }
}
