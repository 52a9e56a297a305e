import Foundation
import GRPCCallsInterop
import Testing

@testable import GRPCCalls

/// What an interceptor's manager hands the next element after a burst of events (no I/O).
@Suite("Requests passed on in one burst")
struct RequestBatchTests {
  /// Records what reached it, one line per event.
  final class RecordingLink: RequestLink {
    let name: String
    let log: LockedValue<[String]>

    init(_ name: String, log: LockedValue<[String]>) {
      self.name = name
      self.log = log
    }

    private func record(_ event: String) {
      self.log.withLock { $0.append("\(self.name) \(event)") }
    }

    func start(
      requestOptions: GRPCRequestOptions,
      callOptions: GRPCCallOptions,
      writes: [any Sendable],
      finish: Bool
    ) {
      self.record("start \(requestOptions.path) writes=\(writes.map { "\($0)" }) finish=\(finish)")
    }
    func write(_ message: any Sendable) { self.record("write \(message)") }
    func finish() { self.record("finish") }
    func cancel() { self.record("cancel") }
    func receiveNextMessages(_ count: Int) { self.record("demand \(count)") }
  }

  static let options = GRPCRequestOptions(unchecked: "localhost:1", path: "/s/m", safety: .default)

  @Test("a start with the writes and finish that followed it reaches the element as one start")
  func startCarriesWritesAndFinish() {
    let log = LockedValue<[String]>([])
    let link = RecordingLink("A", log: log)
    var batch = RequestBatch()
    batch.append(.start(Self.options, GRPCCallOptions()), to: link)
    batch.append(.write(1), to: link)
    batch.append(.write(2), to: link)
    batch.append(.finish, to: link)
    batch.append(.receiveNextMessages(3), to: link)
    batch.deliver()
    #expect(
      log.withLock { $0 } == ["A start /s/m writes=[\"1\", \"2\"] finish=true", "A demand 3"]
    )
  }

  @Test("anything between the start and a write keeps its place; later writes go one by one")
  func orderKept() {
    let log = LockedValue<[String]>([])
    let link = RecordingLink("A", log: log)
    var batch = RequestBatch()
    batch.append(.start(Self.options, GRPCCallOptions()), to: link)
    batch.append(.receiveNextMessages(1), to: link)
    batch.append(.write(1), to: link)
    batch.append(.finish, to: link)
    batch.append(.cancel, to: link)
    batch.deliver()
    #expect(
      log.withLock { $0 } == [
        "A start /s/m writes=[] finish=false", "A demand 1", "A write 1", "A finish", "A cancel",
      ]
    )
  }

  @Test("requests to a discarded element are dropped; those to its successor merge on their own")
  func perElement() {
    let log = LockedValue<[String]>([])
    let old = RecordingLink("old", log: log)
    let new = RecordingLink("new", log: log)
    var batch = RequestBatch()
    batch.append(.start(Self.options, GRPCCallOptions()), to: old)
    batch.append(.write(1), to: old)
    batch.removeAll(for: old)
    batch.append(.start(Self.options, GRPCCallOptions()), to: new)
    batch.append(.write(1), to: new)
    batch.append(.finish, to: new)
    #expect(!batch.isEmpty)
    batch.deliver()
    #expect(log.withLock { $0 } == ["new start /s/m writes=[\"1\"] finish=true"])
  }
}
