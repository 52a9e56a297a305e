internal import Foundation

/// Prints what the figures were measured on.
enum BenchMachine {
  static func describe() {
    let cpu =
      (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?
      .split(separator: "\n")
      .first { $0.hasPrefix("model name") }?
      .split(separator: ":", maxSplits: 1).last?
      .trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    Console.line(
      "machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(cpu), "
        + "\(ProcessInfo.processInfo.physicalMemory / (1 << 30)) GiB"
    )
    #if DEBUG
    Console.line(
      "WARNING: debug build; figures are not representative (swift run -c release grpc-calls bench)"
    )
    #endif
  }
}
