internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCCore
internal import SwiftProtobuf

/// A steady load of small unary calls, a fixed number in flight, each recorded: when it started
/// and ended, and how. What `grpc-calls faults` measures a fault against.
final class ProbeLoad: Sendable {
  /// One call of the load.
  struct Record: Sendable {
    var start: ContinuousClock.Instant
    var end: ContinuousClock.Instant?
    var code: RPCError.Code?
    var message: String?
    var closes = 0
  }

  private let client: InteropClient
  private let state = LockedValue((records: [Record](), stopped: false))

  init(client: InteropClient) {
    self.client = client
  }

  var records: [Record] { self.state.withLock { $0.records } }

  /// Runs `inFlight` callers until ``stop()``; returns once every call made has closed, or 60 s
  /// after the stop (calls still open then are reported as never closed).
  func run(inFlight: Int) async {
    await withTaskGroup(of: Void.self) { group in
      for _ in 0 ..< inFlight {
        group.addTask { await self.callUntilStopped() }
      }
    }
  }

  func stop() {
    self.state.withLock { $0.stopped = true }
  }

  private func callUntilStopped() async {
    let request =
      (try? Grpc_Testing_SimpleRequest.with { $0.responseSize = 64 }.serializedData()) ?? Data()
    while !self.state.withLock({ $0.stopped }) {
      let index = self.state.withLock { state in
        state.records.append(Record(start: .now))
        return state.records.count - 1
      }
      let closed = AsyncStream<Void>.makeStream()
      let recorder = CallRecorder(onClose: { close in
        let now = ContinuousClock.now
        self.state.withLock { state in
          state.records[index].closes += 1
          if state.records[index].closes == 1 {
            state.records[index].end = now
            state.records[index].code = close.error?.code
            state.records[index].message = close.error?.message
          }
        }
        closed.continuation.yield()
        closed.continuation.finish()
      })
      guard let (call, _) = try? self.client.makeCall("UnaryCall", recorder: recorder) else {
        return
      }
      call.start()
      call.writeData(request)
      call.finish()
      // Waits for the close; a call that never closes holds this caller (and is reported).
      for await _ in closed.stream { break }
    }
  }
}
