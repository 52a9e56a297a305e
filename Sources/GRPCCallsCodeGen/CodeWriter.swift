/// Accumulates generated Swift, two spaces per indentation level.
struct CodeWriter {
  private(set) var text = ""
  private var indentation = 0

  mutating func line(_ line: String) {
    self.text += String(repeating: "  ", count: self.indentation) + line + "\n"
  }

  mutating func blankLine() {
    self.text += "\n"
  }

  /// Writes `///` comment lines (as SwiftProtobuf renders proto comments) at this indentation.
  mutating func comments(_ comments: String) {
    for line in comments.split(separator: "\n", omittingEmptySubsequences: false)
    where !line.isEmpty {
      self.line(String(line))
    }
  }

  mutating func indented(_ body: (inout CodeWriter) -> Void) {
    self.indentation += 1
    body(&self)
    self.indentation -= 1
  }
}
