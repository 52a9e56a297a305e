import Foundation
import Testing

@testable import GRPCCalls

@Suite("GRPCCall2 lifecycle state machine (no I/O)")
struct GRPCCall2StateMachineTests {
  typealias Machine = GRPCCall2.StateMachine

  @Test("writes and finish before start are handed over by start, in order")
  func bufferedBeforeStart() throws {
    var machine = Machine()
    #expect(machine.write(Data([1])).isNone)
    #expect(machine.write(Data([2])).isNone)
    #expect(machine.finish().isNone)
    guard case .startRPC(let writes, let finish) = machine.start() else {
      Issue.record("start did not start the RPC")
      return
    }
    #expect(writes.map { $0 as? Data } == [Data([1]), Data([2])])
    #expect(finish)
  }

  @Test("start twice is a no-op")
  func startTwice() {
    var machine = Machine()
    #expect(machine.start().isStartRPC)
    #expect(machine.start().isNone)
  }

  @Test("writes after start go straight to the RPC")
  func writeAfterStart() {
    var machine = Machine()
    _ = machine.start()
    guard case .write(let message) = machine.write(Data([7])) else {
      Issue.record("write after start was not forwarded")
      return
    }
    #expect(message as? Data == Data([7]))
  }

  @Test("write after finish, and finish twice, are no-ops")
  func misuseAfterFinish() {
    var machine = Machine()
    _ = machine.start()
    #expect(machine.finish().isFinish)
    #expect(machine.write(Data([1])).isNone)
    #expect(machine.finish().isNone)
  }

  @Test("a write after finish but before start is dropped")
  func writeAfterFinishBeforeStart() {
    var machine = Machine()
    _ = machine.finish()
    _ = machine.write(Data([1]))
    guard case .startRPC(let writes, true) = machine.start() else {
      Issue.record("start did not start a half-closed RPC")
      return
    }
    #expect(writes.isEmpty)
  }

  @Test("cancel before start closes the call; later events are absorbed")
  func cancelBeforeStart() {
    var machine = Machine()
    guard case .cancel = machine.cancel() else {
      Issue.record("cancel before start did not close the call")
      return
    }
    #expect(machine.start().isNone)
    #expect(machine.write(Data()).isNone)
    #expect(machine.finish().isNone)
    #expect(machine.cancel().isNone)
  }

  @Test("cancel after start or finish stops the RPC once", arguments: [false, true])
  func cancelAfterStart(finishFirst: Bool) {
    var machine = Machine()
    _ = machine.start()
    if finishFirst { _ = machine.finish() }
    guard case .cancel = machine.cancel() else {
      Issue.record("cancel did not stop the RPC")
      return
    }
    #expect(machine.cancel().isNone)
  }
}

extension GRPCCall2.StateMachine.Action {
  var isNone: Bool { if case .none = self { true } else { false } }
  var isStartRPC: Bool { if case .startRPC = self { true } else { false } }
  var isFinish: Bool { if case .finish = self { true } else { false } }
}
