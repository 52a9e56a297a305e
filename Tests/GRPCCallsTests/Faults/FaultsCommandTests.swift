import Foundation
import GRPCCallsInterop
import Testing

/// `grpc-calls faults` measures faults under load and prints the Reliability article's table.
@Suite("grpc-calls faults")
struct FaultsCommandTests {
  @Test("a reset under load: the table row says what the calls did, and no call was lost")
  func resetRow() async throws {
    // A deadline only as a safety net: a busy machine may stall a call that waited for ready.
    let tool = try ToolProcess([
      "faults", "--only", "connections reset", "--deadline", "\(CloseWait.seconds)",
    ])
    let row = try await tool.line(startingWith: "| connections reset (RST) for 0.5 s |")
    let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
    #expect(cells.count == 5, "\(row)")
    #expect(cells.last == "0", "calls lost: \(row)")
    #expect(cells[1].contains("succeeded"), "\(row)")
    #expect(try await tool.waitForExit() == 0)
  }
}
