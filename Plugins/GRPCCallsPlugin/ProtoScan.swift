import Foundation

/// What the build plugin must know of a `.proto` file before protoc runs: whether it declares a
/// service. protoc-gen-grpc-calls writes nothing for a file without one, so the plugin declares
/// no output for it (a declared output that is never written fails the build).
///
/// Not a parser: it drops comments and string literals, then looks for the `service` keyword
/// starting a top-level declaration (`service Name {`), which is all the question needs.
enum ProtoScan {
  /// Whether `source`, the text of a `.proto` file, declares a service.
  static func declaresService(_ source: String) -> Bool {
    let code = Self.withoutCommentsAndStrings(source)
    let pattern = #"(^|[;}\s])service\s+[A-Za-z_][A-Za-z0-9_]*\s*\{"#
    return code.range(of: pattern, options: .regularExpression) != nil
  }

  /// `source` with its `//` and `/* */` comments and its string literals replaced by spaces.
  static func withoutCommentsAndStrings(_ source: String) -> String {
    var out = ""
    var scalars = source.unicodeScalars.makeIterator()
    var pending = scalars.next()
    while let scalar = pending {
      pending = scalars.next()
      switch scalar {
      case "/" where pending == "/":
        while let next = pending, next != "\n" { pending = scalars.next() }
        out.unicodeScalars.append(" ")
      case "/" where pending == "*":
        var previous: Unicode.Scalar = " "
        pending = scalars.next()
        while let next = pending, !(previous == "*" && next == "/") {
          previous = next
          pending = scalars.next()
        }
        pending = scalars.next()
        out.unicodeScalars.append(" ")
      case "\"", "'":
        while let next = pending, next != scalar, next != "\n" {
          pending = scalars.next()
          if next == "\\" { pending = scalars.next() }
        }
        pending = scalars.next()
        out.unicodeScalars.append(" ")
      default:
        out.unicodeScalars.append(scalar)
      }
    }
    return out
  }
}
