import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// Runs many calls of one method, a fixed number at a time, and keeps each call's recorder, so
/// that a fault scenario can check every call afterwards.
struct CallBatch: Sendable {
  let client: InteropClient
  let method: String
  let request: Data
  /// How many calls have closed, and how many of those failed, so far.
  let progress = Progress()

  /// Counts closes as they are delivered (a second close of one call counts again, which
  /// ``expectEachClosedOnce(_:with:sourceLocation:)`` then reports).
  final class Progress: Sendable {
    private let counts = LockedValue((closed: 0, failed: 0))
    private let starts = LockedValue<[ContinuousClock.Instant]>([])

    /// When each call was started, in the order the calls were made.
    var startTimes: [ContinuousClock.Instant] { self.starts.withLock { $0 } }

    func recordStart() {
      self.starts.withLock { $0.append(.now) }
    }

    var closed: Int { self.counts.withLock { $0.closed } }
    var failed: Int { self.counts.withLock { $0.failed } }

    func record(failed: Bool) {
      self.counts.withLock {
        $0.closed += 1
        if failed { $0.failed += 1 }
      }
    }

    /// Waits (up to `seconds`) until `condition` holds for the counts; whether it did.
    @discardableResult
    func wait(
      upTo seconds: Double = 120,
      until condition: @Sendable (_ closed: Int, _ failed: Int) -> Bool
    ) async -> Bool {
      await eventually(upTo: seconds) {
        self.counts.withLock { condition($0.closed, $0.failed) } ? true : nil
      } ?? false
    }
  }

  /// Makes `count` calls, at most `width` open at once; each is started, sent ``request`` and
  /// half-closed.
  ///
  /// - Returns: Every call's recorder, in the order the calls were made, once all have closed
  ///   (or 600 s passed: the missing closes are then reported).
  func run(_ count: Int, width: Int) async throws -> [CallRecorder] {
    var recorders: [CallRecorder] = []
    recorders.reserveCapacity(count)
    for index in 0 ..< count {
      if index >= width {
        let free = await self.progress.wait(upTo: 300) { closed, _ in closed > index - width }
        #expect(free, "no call closed for 300 s with \(width) open")
        guard free else { break }
      }
      let progress = self.progress
      let recorder = CallRecorder(onClose: { close in progress.record(failed: close.error != nil) })
      let (call, _) = try self.client.makeCall(self.method, recorder: recorder)
      self.progress.recordStart()
      call.start()
      call.writeData(self.request)
      call.finish()
      recorders.append(recorder)
    }
    let made = recorders.count
    let done = await self.progress.wait(upTo: 600) { closed, _ in closed >= made }
    #expect(done, "\(made - self.progress.closed) of \(made) calls did not close within 600 s")
    return recorders
  }
}

/// Checks the contract a fault must not break: every call closed exactly once, on its handler's
/// queue, with nothing after the close, and with one of `codes` (`nil`: OK).
///
/// Call it after the batch is over, so that a second close would have had time to arrive.
func expectEachClosedOnce(
  _ recorders: [CallRecorder],
  with codes: Set<RPCError.Code?>,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  var reported = 0
  for (index, recorder) in recorders.enumerated() where reported < 10 {
    let code = recorder.close?.error?.code
    let held = recorder.closeCount == 1 && recorder.deliveryContractHeld && codes.contains(code)
    if !held { reported += 1 }
    #expect(
      recorder.closeCount == 1,
      "call \(index) closed \(recorder.closeCount) times",
      sourceLocation: sourceLocation
    )
    #expect(
      recorder.deliveryContractHeld,
      "call \(index) broke the delivery order",
      sourceLocation: sourceLocation
    )
    #expect(
      codes.contains(code),
      "call \(index) closed with \(String(describing: recorder.close?.error))",
      sourceLocation: sourceLocation
    )
  }
}

/// Makes calls that wait for ready until one succeeds (for up to ``CloseWait/seconds``): the
/// channel serves new calls once a fault is gone. Returns the last error, `nil` when a call
/// succeeded.
func recoveredError(_ client: InteropClient) async -> (any Error)? {
  var waiting = client
  waiting.callOptions.waitForReady = true
  waiting.callOptions.timeout = CloseWait.seconds
  let deadline = ContinuousClock.now + .seconds(CloseWait.seconds)
  var lastError: (any Error)?
  repeat {
    do {
      try await waiting.run(.emptyUnary)
      return nil
    } catch {
      lastError = error
    }
  } while ContinuousClock.now < deadline
  return lastError
}
