import Testing

@testable import GRPCLegacy

/// The writer's machine alone: events in, deliveries out, no threads.
@Suite("GRXWriter state machine")
struct GRXWriterStateMachineTests {
  typealias Machine = GRXWriter.StateMachine

  /// Everything the performer would deliver now, as strings.
  static func deliver(_ machine: inout Machine) -> [String] {
    guard machine.beginDelivery() else { return [] }
    var delivered: [String] = []
    while let item = machine.nextDelivery() {
      switch item {
      case .value(let value): delivered.append("\(value)")
      case .finish(let error): delivered.append(error == nil ? "end" : "error")
      }
    }
    return delivered
  }

  @Test("values written before start wait for it; then all arrive in order, the end last")
  func startDelivers() {
    var machine = Machine()
    machine.enqueue(.value(1))
    machine.enqueue(.value(2))
    machine.enqueue(.finish(nil))
    #expect(Self.deliver(&machine) == [])
    guard case .started = machine.start() else {
      Issue.record("did not start")
      return
    }
    #expect(Self.deliver(&machine) == ["1", "2", "end"])
    #expect(machine.state == .finished)
  }

  @Test("pausing holds values back; resuming delivers them, then the end queued meanwhile")
  func pauseAndResume() {
    var machine = Machine()
    _ = machine.start()
    _ = machine.set(.paused)
    machine.enqueue(.value(1))
    machine.enqueue(.finish(nil))
    #expect(Self.deliver(&machine) == [])
    let resumed = machine.set(.started)
    guard case .resumed = resumed else {
      Issue.record("did not resume")
      return
    }
    #expect(Self.deliver(&machine) == ["1", "end"])
  }

  @Test("finishing now drops what is pending and delivers the end, even while paused")
  func finishNow() {
    var machine = Machine()
    _ = machine.start()
    _ = machine.set(.paused)
    machine.enqueue(.value(1))
    let owed = machine.finishNow(TestError())
    #expect(owed)
    #expect(Self.deliver(&machine) == ["error"])
    #expect(machine.state == .finished)
  }

  @Test("finished by hand: nothing more is delivered or accepted; finished absorbs every event")
  func finishedByHand() {
    var machine = Machine()
    _ = machine.start()
    machine.enqueue(.value(1))
    let stopped = machine.set(.finished)
    guard case .stopped = stopped else {
      Issue.record("did not stop")
      return
    }
    machine.enqueue(.value(2))
    #expect(Self.deliver(&machine) == [])
    let restarted = machine.set(.started)
    guard case .none = restarted else {
      Issue.record("a finished writer resumed")
      return
    }
    let owed = machine.finishNow(nil)
    #expect(!owed)
    guard case .refused(.finished) = machine.start() else {
      Issue.record("a finished writer started")
      return
    }
  }

  @Test("a second start is refused; nothing after an end is accepted")
  func startOnceEndOnce() {
    var machine = Machine()
    _ = machine.start()
    guard case .refused(.started) = machine.start() else {
      Issue.record("started twice")
      return
    }
    machine.enqueue(.finish(nil))
    machine.enqueue(.value(1))
    #expect(Self.deliver(&machine) == ["end"])
  }

  @Test("one performer at a time: a second claim fails until the first gives the role up")
  func onePerformer() {
    var machine = Machine()
    _ = machine.start()
    machine.enqueue(.value(1))
    let first = machine.beginDelivery()
    let second = machine.beginDelivery()
    #expect(first && !second)
    _ = machine.nextDelivery()
    let none = machine.nextDelivery()
    #expect(none == nil)
    machine.enqueue(.value(2))
    let again = machine.beginDelivery()
    #expect(again)
  }

  @Test("a writer finished before it started owes no one a callback")
  func finishBeforeStart() {
    var machine = Machine()
    let owed = machine.finishNow(nil)
    #expect(!owed)
    #expect(machine.state == .finished)
  }
}

struct TestError: Error {}
