internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Darwin)
internal import Darwin
#endif

/// The process's CPU time, context switches and peak memory, from `getrusage`.
struct ResourceUsage {
  /// User plus system CPU time, in seconds.
  var cpuSeconds: Double
  /// Context switches of all the process's threads, voluntary (a thread waits: for work, a lock,
  /// the network) and involuntary (the scheduler preempts it). A hand-off to a sleeping thread
  /// costs one when that thread has done its part and waits again.
  var contextSwitches: Int
  /// Peak resident set size, in MiB.
  var peakRSSMiB: Double

  static func now() -> ResourceUsage {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    let cpu =
      Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
      + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    #if os(Linux)
    let peak = Double(usage.ru_maxrss) / 1024  // KiB on Linux
    #else
    let peak = Double(usage.ru_maxrss) / (1024 * 1024)  // bytes on Darwin
    #endif
    let switches = Int(usage.ru_nvcsw) + Int(usage.ru_nivcsw)
    return ResourceUsage(cpuSeconds: cpu, contextSwitches: switches, peakRSSMiB: peak)
  }

  /// The process's resident memory now, in bytes, from /proc/self/statm (0 where unavailable).
  static func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
      let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }
}
