import Foundation
import Testing

@testable import GRPCCalls

@Suite("RPC runner state machine (no I/O)")
struct RPCRunnerStateMachineTests {
  typealias Machine = GRPCCall2Internal.StateMachine

  @Test("requests that came with the start, then later ones, are taken in order")
  func requestOrder() {
    var machine = Machine()
    let result1 = machine.start(writes: [1, 2], finish: false, flowControl: false)
    #expect(result1)
    #expect(machine.write(3) == nil)
    #expect(machine.nextRequest().value == 1)
    #expect(machine.nextRequest().value == 2)
    #expect(machine.nextRequest().value == 3)
    #expect(machine.nextRequest().isWait)
    _ = machine.finish()
    #expect(machine.nextRequest().isEnd)
  }

  @Test("a half-closed request side hands over every request at once, and only once")
  func allKnown() {
    var machine = Machine()
    _ = machine.start(writes: [1], finish: true, flowControl: false)
    #expect(machine.takeAllRequestsIfFinished()?.map { $0 as? Int } == [1])
    #expect(machine.takeAllRequestsIfFinished() == nil)
    #expect(machine.nextRequest().isEnd)
  }

  @Test(
    "a rewind hands the attempt's requests out again, before later ones; writes already reported are not reported twice"
  )
  func rewindReplays() {
    var machine = Machine()
    _ = machine.start(writes: [1, 2], finish: false, flowControl: true)
    #expect(machine.nextRequest().value == 1)
    let reported = machine.acceptedWrite()
    #expect(reported)
    #expect(machine.nextRequest().value == 2)
    _ = machine.endRequests()
    // A write between the attempts waits for the next one.
    #expect(machine.write(3) == nil)
    let rewound = machine.rewind()
    #expect(rewound)
    #expect(machine.nextRequest().value == 1)
    let repeated = machine.acceptedWrite()
    #expect(!repeated)
    #expect(machine.nextRequest().value == 2)
    let new = machine.acceptedWrite()
    #expect(new)
    #expect(machine.nextRequest().value == 3)
    _ = machine.finish()
    #expect(machine.nextRequest().isEnd)
  }

  @Test("an attempt that took more than the replay limit, or a cancelled call, is not rewound")
  func rewindRefused() {
    var machine = Machine()
    _ = machine.start(writes: [1, 2], finish: false, flowControl: false)
    #expect(machine.nextRequest().value == 1)
    machine.tookRequestBytes(Machine.replayLimit)
    #expect(machine.nextRequest().value == 2)
    machine.tookRequestBytes(1)
    let overflowed = machine.rewind()
    #expect(!overflowed)

    var cancelled = Machine()
    _ = cancelled.start(writes: [1], finish: false, flowControl: false)
    #expect(cancelled.nextRequest().value == 1)
    _ = cancelled.cancel(.app)
    let afterCancel = cancelled.rewind()
    #expect(!afterCancel)
  }

  @Test("a request side still open hands over nothing at once")
  func notAllKnown() {
    var machine = Machine()
    _ = machine.start(writes: [1], finish: false, flowControl: false)
    #expect(machine.takeAllRequestsIfFinished() == nil)
    #expect(machine.nextRequest().value == 1)
  }

  @Test("the request side has ended after the finish, a cancel, or the close, and not before")
  func requestSideEnded() {
    var open = Machine()
    _ = open.start(writes: [1], finish: false, flowControl: false)
    #expect(!open.requestSideEnded)
    _ = open.write(2)
    #expect(!open.requestSideEnded)

    var finished = open
    _ = finished.finish()
    #expect(finished.requestSideEnded)

    var cancelled = open
    _ = cancelled.cancel(.app)
    #expect(cancelled.requestSideEnded)

    var closed = open
    let first = closed.close().first
    #expect(first)
    #expect(closed.requestSideEnded)

    var allKnown = Machine()
    _ = allKnown.start(writes: [1], finish: true, flowControl: false)
    #expect(allKnown.requestSideEnded)
  }

  @Test("a writer does not park while a request waits: the request is not consumed by parking")
  func parkingKeepsTheRequest() async {
    var machine = Machine()
    _ = machine.start(writes: [], finish: false, flowControl: false)
    #expect(machine.nextRequest().isWait)
    _ = machine.write(7)
    // The writer tries to park after the write arrived: it must look again and find it.
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let result2 = machine.parkWriter(continuation)
      #expect(!result2)
      continuation.resume()
    }
    #expect(machine.nextRequest().value == 7)
  }

  @Test("a parked writer is woken by a write, by the finish and by a cancel")
  func parkedWriterWakes() async {
    for wake in ["write", "finish", "cancel"] {
      var machine = Machine()
      _ = machine.start(writes: [], finish: false, flowControl: false)
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let result3 = machine.parkWriter(continuation)
        #expect(result3)
        let woken: CheckedContinuation<Void, Never>? =
          switch wake {
          case "write": machine.write(1)
          case "finish": machine.finish()
          default: machine.cancel(.app).writer
          }
        #expect(woken != nil, "\(wake) did not wake the writer")
        woken?.resume()
      }
    }
  }

  @Test("writes after the finish, and after a cancel, are dropped")
  func dropsLateWrites() {
    var machine = Machine()
    _ = machine.start(writes: [], finish: true, flowControl: false)
    _ = machine.write(1)
    #expect(machine.nextRequest().isEnd)
    var cancelled = Machine()
    _ = cancelled.start(writes: [], finish: false, flowControl: false)
    _ = cancelled.cancel(.app)
    _ = cancelled.write(1)
    #expect(cancelled.nextRequest().isReset)
  }

  @Test("a cancel drops the queued requests and resets the stream instead of half-closing it")
  func cancelResets() {
    var machine = Machine()
    _ = machine.start(writes: [1, 2], finish: true, flowControl: false)
    _ = machine.cancel(.deadline)
    #expect(machine.nextRequest().isReset)
    #expect(machine.takeAllRequestsIfFinished() == nil)
  }

  @Test(
    "cancel before start closes at once; while running it cancels the task; the first reason wins"
  )
  func cancel() {
    var idle = Machine()
    #expect(idle.cancel(.app).closeNow)
    let result4 = idle.start(writes: [], finish: true, flowControl: false)
    #expect(!result4)
    let result5 = idle.close().first
    #expect(!result5)

    var running = Machine()
    _ = running.start(writes: [], finish: true, flowControl: false)
    let task = Task {}
    running.running(in: task)
    let first = running.cancel(.deadline)
    #expect(first.task == task && !first.closeNow)
    let second = running.cancel(.app)
    #expect(second.task == nil)
    #expect(running.cancelReason == .deadline)
  }

  @Test("the close lets go of the RPC's task: a later cancel has none to cancel")
  func closeReleasesTask() {
    var machine = Machine()
    _ = machine.start(writes: [], finish: true, flowControl: false)
    machine.running(in: Task {})
    let closed = machine.close().first
    #expect(closed)
    let afterClose = machine.cancel(.app)
    #expect(afterClose.task == nil)
    // A task given after the close (it cannot be: the lock covers both) is not kept.
    machine.running(in: Task {})
    let late = machine.cancel(.app)
    #expect(late.task == nil)
  }

  @Test("an attempt's stream, what went up, and the requests sent, for retries and reading")
  func attemptBookkeeping() {
    var machine = Machine()
    _ = machine.start(writes: [], finish: false, flowControl: true)
    #expect(!machine.streamOpened)
    machine.streamDidOpen()
    #expect(machine.streamOpened)
    machine.attemptBegins()
    #expect(!machine.streamOpened, "each attempt is judged by its own stream")

    let firstReport = machine.reportsKnownWrites()
    let secondReport = machine.reportsKnownWrites()
    #expect(firstReport)
    #expect(!secondReport, "once per call, whatever the attempts")

    #expect(!machine.delivered)
    machine.deliversResponse()
    #expect(machine.delivered)

    // Two requests sent: six responses answer them, a seventh floods the client.
    let reported = machine.sent(2)
    #expect(reported, "reported under flow control")
    #expect(!machine.floodsClient(responses: 6))
    #expect(machine.floodsClient(responses: 7))
    _ = machine.finish()
    #expect(machine.floodsClient(responses: 0), "no more requests will come")
  }

  @Test("demand accumulates before start and saturates; a cancelled call gives none")
  func demand() {
    var machine = Machine()
    #expect(machine.addDemand(2) == nil)
    #expect(machine.addDemand(.max) == nil)
    _ = machine.start(writes: [], finish: true, flowControl: true)
    #expect(machine.demand == .max)
    #expect(machine.takeDemand(reader: nil) == true)
    _ = machine.cancel(.app)
    #expect(machine.takeDemand(reader: nil) == false)
  }

  @Test("the close passes once and ends the machine")
  func closeOnce() {
    var machine = Machine()
    _ = machine.start(writes: [], finish: true, flowControl: false)
    let result6 = machine.close().first
    #expect(result6)
    let result7 = machine.close().first
    #expect(!result7)
    #expect(machine.phase == .ended)
    #expect(machine.addDemand(1) == nil)
  }
}

extension GRPCCall2Internal.StateMachine.NextRequest {
  var value: Int? { if case .message(let value) = self { value as? Int } else { nil } }
  var isWait: Bool { if case .wait = self { true } else { false } }
  var isEnd: Bool { if case .end = self { true } else { false } }
  var isReset: Bool { if case .reset = self { true } else { false } }
}
