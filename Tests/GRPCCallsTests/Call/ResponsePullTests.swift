import GRPCCore
import Testing

@testable import GRPCCalls

/// The hand-over of a flooding stream between the call's task and the consumer's, without
/// I/O: the read is a script, the stop a flag.
@Suite("ResponsePull (no I/O)")
struct ResponsePullTests {
  /// A read that takes its results from a list, and can be held until `stop` runs.
  final class Script: @unchecked Sendable {
    private let state = LockedValue(State())

    private struct State {
      var results: [ResponsePull.Read] = []
      var stops = 0
      var holding = false
      var held: CheckedContinuation<Void, Never>?
      var reads = 0
    }

    init(_ results: [ResponsePull.Read], holding: Bool = false) {
      self.state.withLock {
        $0.results = results
        $0.holding = holding
      }
    }

    var stops: Int { self.state.withLock { $0.stops } }
    var reads: Int { self.state.withLock { $0.reads } }

    /// Whether a read waits for `stop`.
    var isHeld: Bool { self.state.withLock { $0.held != nil } }

    func read() async -> ResponsePull.Read {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let hold = self.state.withLock { state in
          state.reads += 1
          guard state.holding else { return false }
          state.held = continuation
          return true
        }
        if !hold { continuation.resume() }
      }
      return self.state.withLock { $0.results.isEmpty ? .delivered : $0.results.removeFirst() }
    }

    func stop() {
      let held = self.state.withLock { state in
        state.stops += 1
        state.holding = false
        defer { state.held = nil }
        return state.held
      }
      held?.resume()
    }

    func makePull() -> ResponsePull {
      ResponsePull(read: { await self.read() }, stop: { self.stop() })
    }
  }

  static let ok = RPCOutcome(trailers: ["end": "yes"], error: nil)

  @Test(
    "a message, taken or through the callbacks, leaves it parked; the end goes to the call's task, and the stream is done"
  )
  func readsToTheEnd() async {
    let script = Script([.message(7), .delivered, .ended(Self.ok)])
    let pull = script.makePull()
    #expect(await pull.readNext().message as? Int == 7)
    #expect(await pull.readNext().isCallbacks)
    let waiting = Task { await pull.waitForEnd() }
    #expect(await pull.readNext().isCallbacks)
    let outcome = await waiting.value
    #expect(outcome?.trailers == ["end": "yes"])
    #expect(await pull.readNext().isNotHanded)
    #expect(script.reads == 3 && script.stops == 0)
  }

  @Test("an end read before the call's task waits is kept for it")
  func endBeforeWaiting() async {
    let script = Script([.ended(Self.ok)])
    let pull = script.makePull()
    #expect(await pull.readNext().isCallbacks)
    #expect(await pull.waitForEnd()?.trailers == ["end": "yes"])
  }

  @Test("cancelled while parked: the call's task takes the stream back; no stop, no more reads")
  func cancelledWhileParked() async {
    let script = Script([.message(1)])
    let pull = script.makePull()
    #expect(await pull.readNext().message != nil)
    let waiting = Task { await pull.waitForEnd() }
    waiting.cancel()
    #expect(await waiting.value == nil)
    #expect(await pull.readNext().isNotHanded)
    #expect(script.reads == 1 && script.stops == 0)
  }

  @Test("cancelled before it waits: it takes the stream back at once")
  func cancelledBeforeWaiting() async {
    let script = Script([])
    let pull = script.makePull()
    let waiting = Task {
      withUnsafeCurrentTask { $0?.cancel() }
      return await pull.waitForEnd()
    }
    #expect(await waiting.value == nil)
    #expect(await pull.readNext().isNotHanded)
  }

  @Test(
    "cancelled while the consumer reads: the stream is stopped; a read that ends it gives the end, one that found a message gives the stream back",
    arguments: [true, false]
  )
  func cancelledWhileReading(readEnds: Bool) async {
    let script = Script(
      [readEnds ? .ended(RPCOutcome(trailers: nil, error: nil)) : .message(1)],
      holding: true
    )
    let pull = script.makePull()
    let waiting = Task { await pull.waitForEnd() }
    let reading = Task { await pull.readNext().isNotHanded }
    // The read waits on the transport until the call's task stops it.
    while !script.isHeld { await Task.yield() }
    waiting.cancel()
    #expect(!(await reading.value))
    let outcome = await waiting.value
    #expect(script.stops == 1)
    #expect((outcome != nil) == readEnds)
    #expect(await pull.readNext().isNotHanded)
  }
}

extension ResponsePull.Next {
  fileprivate var message: (any Sendable)? {
    if case .message(let message) = self { return message }
    return nil
  }

  fileprivate var isCallbacks: Bool {
    if case .callbacks = self { return true }
    return false
  }

  fileprivate var isNotHanded: Bool {
    if case .notHanded = self { return true }
    return false
  }
}

extension RPCOutcome: Equatable {
  static func == (lhs: RPCOutcome, rhs: RPCOutcome) -> Bool {
    lhs.trailers == rhs.trailers && lhs.error?.code == rhs.error?.code
  }
}
