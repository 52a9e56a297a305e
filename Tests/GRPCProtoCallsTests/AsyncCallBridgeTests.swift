import GRPCCalls
import GRPCCore
import Testing

@testable import GRPCProtoCalls

/// The async bridge reading a stream handed to it, without I/O: the stream's reads are fed by
/// the test, the call's callbacks are made by hand.
@Suite("AsyncCallBridge reading a handed-over stream (no I/O)")
struct AsyncCallBridgeTests {
  /// A stream whose reads wait until the test feeds what each finds.
  final class Reads: @unchecked Sendable {
    private struct State {
      var fed: [ResponsePull.Read] = []
      var waiting: CheckedContinuation<ResponsePull.Read, Never>?
      var count = 0
    }

    private let state = LockedValue(State())

    /// How many reads began.
    var count: Int { self.state.withLock { $0.count } }

    func read() async -> ResponsePull.Read {
      await withCheckedContinuation { continuation in
        let ready: ResponsePull.Read? = self.state.withLock { state in
          state.count += 1
          guard !state.fed.isEmpty else {
            state.waiting = continuation
            return nil
          }
          return state.fed.removeFirst()
        }
        if let ready { continuation.resume(returning: ready) }
      }
    }

    func feed(_ read: ResponsePull.Read) {
      let waiting = self.state.withLock { state in
        guard let waiting = state.waiting else {
          state.fed.append(read)
          return nil as CheckedContinuation<ResponsePull.Read, Never>?
        }
        state.waiting = nil
        return waiting
      }
      waiting?.resume(returning: read)
    }

    /// Waits until `count` reads began.
    func waitForReads(_ count: Int) async {
      while self.count < count { await Task.yield() }
    }
  }

  /// A bridge that was handed a stream read from `reads`, and a reader of its next message,
  /// once that reader is reading the stream.
  static func reading(
    _ reads: Reads
  ) async -> (AsyncCallBridge, Task<(any Sendable)?, any Error>) {
    let bridge = AsyncCallBridge(flowControlled: true)
    bridge.didReceiveInitialMetadata([:])
    let pull = ResponsePull(read: { await reads.read() }, stop: { reads.feed(.delivered) })
    #expect(bridge.take(pull))
    let reader = Task { try await bridge.nextMessage() }
    await reads.waitForReads(1)
    return (bridge, reader)
  }

  @Test("a message read while a callback buffered one is taken after it")
  func pulledAfterBuffered() async throws {
    let reads = Reads()
    let (bridge, first) = await Self.reading(reads)
    bridge.didReceiveData(1)
    reads.feed(.message(2))
    #expect(try await first.value as? Int == 1)
    #expect(try await bridge.nextMessage() as? Int == 2)
    #expect(reads.count == 1, "the buffered message came without a read")
    let end = Task { try await bridge.nextMessage() }
    await reads.waitForReads(2)
    reads.feed(.ended(RPCOutcome(trailers: ["t": "1"], error: nil)))
    bridge.didClose(trailingMetadata: ["t": "1"], error: nil)
    #expect(try await end.value == nil)
    #expect(bridge.trailers == ["t": "1"])
  }

  @Test("a message read that goes through the callbacks is waited for, not read past")
  func readThroughCallbacks() async throws {
    let reads = Reads()
    let (bridge, first) = await Self.reading(reads)
    reads.feed(.delivered)
    for _ in 0 ..< 100 { await Task.yield() }
    #expect(reads.count == 1)
    bridge.didReceiveData(7)
    #expect(try await first.value as? Int == 7)
  }

  @Test("a message dropped as the call closes: the reader gets the close's error")
  func droppedThenClosed() async throws {
    let reads = Reads()
    let (bridge, reading) = await Self.reading(reads)
    reads.feed(.delivered)
    bridge.didClose(trailingMetadata: nil, error: GRPCError(code: .cancelled, message: "Canceled"))
    await #expect(throws: GRPCError.self) { try await reading.value }
    #expect(reads.count == 1)
  }
}
