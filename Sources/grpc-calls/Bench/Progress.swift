internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// A one-line progress bar on standard error, drawn only when it is a terminal.
struct Progress {
  private let total: Int
  private var done = 0
  private let enabled = isatty(2) == 1

  init(total: Int) {
    self.total = max(1, total)
  }

  mutating func step(_ label: String) {
    self.done += 1
    guard self.enabled else { return }
    let width = 30
    let filled = width * self.done / self.total
    let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
    let line = "\r\(bar) \(100 * self.done / self.total)%  \(label)"
    FileHandle.standardError.write(
      Data((line.padding(toLength: 100, withPad: " ", startingAt: 0)).utf8)
    )
    if self.done == self.total {
      FileHandle.standardError.write(Data("\r\(String(repeating: " ", count: 100))\r".utf8))
    }
  }
}
