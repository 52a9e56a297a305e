internal import ArgumentParser
internal import Foundation

/// `grpc-calls faults`: injects network and server faults under a steady load of calls against
/// the interop server, and prints, for each, what the client did, how soon a call noticed, how
/// soon calls succeeded again once the fault was gone, and how many calls were lost beyond
/// those the fault itself failed (the Reliability article of GRPCCalls).
struct Faults: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract:
      "Inject network and server faults under load; print what the client did, time to detect and recover, calls lost."
  )

  @Option(help: "Calls in flight during each scenario.")
  var inFlight = 4

  @Option(help: "Each call's deadline in seconds, unless its scenario sets one.")
  var deadline = 10.0

  @Option(help: "Run only the scenarios whose name contains this text.")
  var only: String?

  @Flag(help: "Print the message of each distinct failure.")
  var verbose = false

  func validate() throws {
    guard self.inFlight > 0, self.deadline.isFinite, self.deadline > 0 else {
      throw ValidationError("--in-flight and --deadline must be positive")
    }
  }

  func run() async throws {
    BenchMachine.describe()
    var reports: [FaultReport] = []
    for scenario in FaultScenario.all where self.only.map({ scenario.name.contains($0) }) ?? true {
      let report = try await FaultRunner(
        scenario: scenario,
        inFlight: self.inFlight,
        deadline: .seconds(self.deadline)
      )
      .run()
      Console.line(report.progressLine)
      if self.verbose {
        for message in report.messages {
          Console.line("  failed: \(message)")
        }
      }
      reports.append(report)
    }
    Console.line("")
    for line in FaultReport.table(reports) {
      Console.line(line)
    }
    let lost = reports.reduce(0) { $0 + $1.lost }
    if lost > 0 {
      Console.line("FAIL: \(lost) calls lost beyond those the faults failed")
      throw ExitCode.failure
    }
  }
}
