import Foundation
import GRPCCore
import Testing

@testable import GRPCCalls

@Suite("GRPCCall2 state machine (no I/O)")
struct GRPCCall2StateMachineTests {
  typealias Machine = GRPCCall2.StateMachine

  // MARK: Request half

  @Test("writes, finish and demand before start are handed over by start, in order")
  func bufferedBeforeStart() throws {
    var machine = Machine()
    #expect(machine.write(Data([1])).isNone)
    #expect(machine.receiveNextMessages(2).isNone)
    #expect(machine.write(Data([2])).isNone)
    #expect(machine.receiveNextMessages(3).isNone)
    #expect(machine.finish().isNone)
    guard case .startRPC(let writes, let finish, let demand) = machine.start() else {
      Issue.record("start did not start the RPC")
      return
    }
    #expect(writes.map { $0 as? Data } == [Data([1]), Data([2])])
    #expect(finish)
    #expect(demand == 5)
  }

  @Test("start twice is a no-op")
  func startTwice() {
    var machine = Machine()
    #expect(machine.start().isStartRPC)
    #expect(machine.start().isNone)
  }

  @Test("writes and demand after start go straight to the RPC")
  func afterStart() {
    var machine = Machine()
    _ = machine.start()
    guard case .write(let message) = machine.write(Data([7])) else {
      Issue.record("write after start was not forwarded")
      return
    }
    #expect(message as? Data == Data([7]))
    guard case .receiveNextMessages(4) = machine.receiveNextMessages(4) else {
      Issue.record("demand after start was not forwarded")
      return
    }
    #expect(machine.receiveNextMessages(0).isNone)
    #expect(machine.receiveNextMessages(-1).isNone)
  }

  @Test("write after finish, and finish twice, are no-ops; demand still passes")
  func misuseAfterFinish() {
    var machine = Machine()
    _ = machine.start()
    #expect(machine.finish().isFinish)
    #expect(machine.write(Data([1])).isNone)
    #expect(machine.finish().isNone)
    guard case .receiveNextMessages(1) = machine.receiveNextMessages(1) else {
      Issue.record("demand after finish did not reach the RPC")
      return
    }
  }

  @Test("a write after finish but before start is dropped")
  func writeAfterFinishBeforeStart() {
    var machine = Machine()
    _ = machine.finish()
    _ = machine.write(Data([1]))
    guard case .startRPC(let writes, true, _) = machine.start() else {
      Issue.record("start did not start a half-closed RPC")
      return
    }
    #expect(writes.isEmpty)
  }

  @Test("demand before start saturates instead of overflowing")
  func demandSaturates() {
    var machine = Machine()
    _ = machine.receiveNextMessages(.max)
    _ = machine.receiveNextMessages(.max)
    guard case .startRPC(_, _, let demand) = machine.start() else {
      Issue.record("start did not start the RPC")
      return
    }
    #expect(demand == .max)
  }

  // MARK: Cancel

  @Test("cancel before start closes the call with the cancel close; later events are absorbed")
  func cancelBeforeStart() {
    var machine = Machine()
    let (action, drain) = machine.cancel()
    #expect(action.isCancel)
    #expect(drain)
    #expect(machine.start().isNone)
    #expect(machine.write(Data()).isNone)
    #expect(machine.finish().isNone)
    #expect(machine.receiveNextMessages(1).isNone)
    #expect(machine.cancel().0.isNone)
    let deliveries = machine.drainAll()
    #expect(deliveries.count == 1)
    #expect(deliveries.first?.closeError?.message == "Canceled by app")
    #expect(deliveries.first?.closeTrailersAreNil == true)
    #expect(machine.isClosed)
  }

  @Test("cancel drops what is pending and queues only the cancel close")
  func cancelDropsPending() {
    var machine = Machine()
    _ = machine.start()
    let scheduled1 = machine.receive(.initialMetadata([:]))
    #expect(scheduled1)
    let scheduled2 = machine.receive(.message(Data([1])))
    #expect(!scheduled2)
    let scheduled3 = machine.receive(.close(trailers: [:], error: nil))
    #expect(!scheduled3)
    let (action, drain) = machine.cancel()
    #expect(action.isCancel)
    #expect(!drain, "a drain was already scheduled; it picks up the cancel close")
    let deliveries = machine.drainAll()
    #expect(deliveries.count == 1)
    #expect(deliveries.first?.closeError?.code == .cancelled)
  }

  @Test("cancel after the close was taken does nothing")
  func cancelAfterClose() {
    var machine = Machine()
    _ = machine.start()
    _ = machine.receive(.close(trailers: [:], error: nil))
    _ = machine.drainAll()
    let (action, drain) = machine.cancel()
    #expect(action.isNone)
    #expect(!drain)
  }

  @Test("cancel racing a drain: the drain delivers what it took, then only the cancel close")
  func cancelDuringDrain() {
    var machine = Machine()
    _ = machine.start()
    _ = machine.receive(.initialMetadata([:]))
    _ = machine.receive(.message(Data([1])))
    _ = machine.receive(.message(Data([2])))
    #expect(machine.nextDelivery()?.delivery.isInitialMetadata == true)
    _ = machine.cancel()
    let rest = machine.drainAll()
    #expect(rest.count == 1)
    #expect(rest.first?.closeError?.message == "Canceled by app")
  }

  // MARK: Response half

  @Test("a burst schedules one drain and is delivered in order")
  func oneDrainPerBurst() {
    var machine = Machine()
    _ = machine.start()
    let scheduled4 = machine.receive(.initialMetadata([:]))
    #expect(scheduled4)
    let scheduled5 = machine.receive(.message(Data([1])))
    #expect(!scheduled5)
    let scheduled6 = machine.receive(.close(trailers: [:], error: nil))
    #expect(!scheduled6)
    let deliveries = machine.drainAll()
    #expect(deliveries.map(\.kind) == ["headers", "message", "close"])
    #expect(!machine.draining)
    // A later event schedules a new drain only if the call is still open: it is closed.
    let scheduled7 = machine.receive(.message(Data([2])))
    #expect(!scheduled7)
  }

  @Test("an event after the drain emptied the list schedules a new drain")
  func newDrainAfterEmpty() {
    var machine = Machine()
    _ = machine.start()
    let scheduled8 = machine.receive(.initialMetadata([:]))
    #expect(scheduled8)
    _ = machine.drainAll()
    let scheduled9 = machine.receive(.message(Data([1])))
    #expect(scheduled9)
  }

  // MARK: Messages the handler's task read itself

  @Test("a pulled message is the reader's when nothing waits to be delivered")
  func pulledTakenWhenIdle() {
    var machine = Machine()
    _ = machine.start()
    _ = machine.receive(.initialMetadata([:]))
    _ = machine.drainAll()
    let taken = machine.receivePulled(Data([1]))
    #expect(taken)
    #expect(machine.pendingCount == 0 && !machine.draining)
  }

  @Test("a pulled message follows what a drain still delivers")
  func pulledQueuedBehindDrain() {
    var machine = Machine()
    _ = machine.start()
    _ = machine.receive(.initialMetadata([:]))
    _ = machine.receive(.message(Data([1])))
    #expect(machine.nextDelivery()?.delivery.isInitialMetadata == true)
    let queued = !machine.receivePulled(Data([2]))
    #expect(queued, "the running drain delivers it")
    let rest = machine.drainAll()
    #expect(rest.map(\.kind) == ["message", "message"])
    // The drain is over: the next one is the reader's again.
    let takenAfter = machine.receivePulled(Data([3]))
    #expect(takenAfter)
  }

  @Test(
    "a pulled message after a cancel, or after a close came from below, is dropped",
    arguments: [true, false]
  )
  func pulledDroppedWhenClosing(cancelled: Bool) {
    var machine = Machine()
    _ = machine.start()
    if cancelled {
      _ = machine.cancel()
    } else {
      _ = machine.receive(.close(trailers: [:], error: nil))
    }
    let takenClosing = machine.receivePulled(Data([1]))
    #expect(!takenClosing)
    #expect(machine.drainAll().map(\.kind) == ["close"])
    let takenClosed = machine.receivePulled(Data([2]))
    #expect(!takenClosed, "closed: nothing reaches the reader")
  }

  @Test("nothing from below is accepted after a close, even before it is delivered")
  func nothingAfterClose() {
    var machine = Machine()
    _ = machine.start()
    _ = machine.receive(.close(trailers: [:], error: nil))
    let scheduled10 = machine.receive(.message(Data([1])))
    #expect(!scheduled10)
    let scheduled11 = machine.receive(
      .close(trailers: nil, error: GRPCError(code: .internalError, message: "x"))
    )
    #expect(!scheduled11)
    let deliveries = machine.drainAll()
    #expect(deliveries.map(\.kind) == ["close"])
    #expect(deliveries.first?.closeError == nil)
  }

  @Test("taking the close ends the request side")
  func closeEndsRequests() {
    var machine = Machine()
    _ = machine.start()
    _ = machine.receive(
      .close(trailers: nil, error: GRPCError(code: .unavailable, message: "down"))
    )
    _ = machine.drainAll()
    #expect(machine.write(Data()).isNone)
    #expect(machine.finish().isNone)
    #expect(machine.receiveNextMessages(1).isNone)
  }

  @Test("demand before start, then a response before start (an interceptor answering)")
  func responseBeforeStart() {
    var machine = Machine()
    _ = machine.receiveNextMessages(1)
    let scheduled12 = machine.receive(.message(Data([1])))
    #expect(scheduled12)
    let scheduled13 = machine.receive(.close(trailers: [:], error: nil))
    #expect(!scheduled13)
    #expect(machine.drainAll().map(\.kind) == ["message", "close"])
    #expect(machine.start().isNone)
  }

  // MARK: Every event in every state

  enum Phase: String, CaseIterable, Sendable {
    case idle, idleFinished, started, halfClosed, closePending, cancelled, closed
  }

  /// A machine brought to `phase`.
  static func machine(in phase: Phase) -> Machine {
    var machine = Machine()
    switch phase {
    case .idle:
      break
    case .idleFinished:
      _ = machine.finish()
    case .started:
      _ = machine.start()
    case .halfClosed:
      _ = machine.start()
      _ = machine.finish()
    case .closePending:
      _ = machine.start()
      _ = machine.receive(.close(trailers: [:], error: nil))
    case .cancelled:
      _ = machine.start()
      _ = machine.cancel()
    case .closed:
      _ = machine.start()
      _ = machine.receive(.close(trailers: [:], error: nil))
      _ = machine.drainAll()
    }
    return machine
  }

  @Test("every request event in every state", arguments: Phase.allCases)
  func requestEvents(phase: Phase) {
    let live: Set<Phase> = [.idle, .idleFinished, .started, .halfClosed, .closePending]
    var start = Self.machine(in: phase)
    #expect(start.start().isStartRPC == (phase == .idle || phase == .idleFinished))
    var write = Self.machine(in: phase)
    #expect(write.write(Data()).isWrite == (phase == .started || phase == .closePending))
    var finish = Self.machine(in: phase)
    #expect(finish.finish().isFinish == (phase == .started || phase == .closePending))
    var demand = Self.machine(in: phase)
    let passesDemand: Set<Phase> = [.started, .halfClosed, .closePending]
    #expect(demand.receiveNextMessages(1).isDemand == passesDemand.contains(phase))
    var cancel = Self.machine(in: phase)
    #expect(cancel.cancel().0.isCancel == live.contains(phase))
  }

  @Test("every response event in every state", arguments: Phase.allCases)
  func responseEvents(phase: Phase) {
    let accepts: Set<Phase> = [.idle, .idleFinished, .started, .halfClosed]
    for delivery: Machine.Delivery in [
      .initialMetadata([:]), .message(Data()), .didWrite, .close(trailers: [:], error: nil),
    ] {
      var machine = Self.machine(in: phase)
      let before = machine.drainAll().count
      _ = machine.receive(delivery)
      let after = machine.drainAll().count
      #expect(
        (after == 1) == accepts.contains(phase),
        "\(phase) \(delivery.kind), before \(before)"
      )
    }
  }

  // MARK: Randomized

  @Test("100,000 random event sequences keep the invariants")
  func randomized() {
    var generator = SplitMix64(seed: 0x6772_7063_2d63_616c)
    for _ in 0 ..< 100_000 {
      Self.checkRandomSequence(using: &generator)
    }
  }

  /// Feeds one random sequence of events and checks: requests reach the RPC in program order
  /// and only after start; responses are delivered in the order they came, close once, nothing
  /// after it; a cancel before the close delivers "Canceled by app".
  static func checkRandomSequence(using generator: inout SplitMix64) {
    var machine = Machine()
    var nextWrite = 0
    var sentWrites: [Int] = []
    var acceptedWrites: [Int] = []
    var started = false
    var finished = false
    var cancelled = false
    var nextResponse = 0
    var receivedResponses: [Int] = []
    var delivered: [Machine.Delivery] = []
    var closeReceived = false
    var drainScheduled = false

    func handle(_ action: Machine.RequestAction) {
      switch action {
      case .startRPC(let writes, let finish, _):
        precondition(!started)
        started = true
        sentWrites += writes.map { $0 as! Int }
        if finish { finished = true }
      case .write(let message):
        precondition(started && !finished)
        sentWrites.append(message as! Int)
      case .finish:
        precondition(started && !finished)
        finished = true
      case .receiveNextMessages:
        precondition(started)
      case .cancel, .none:
        break
      }
    }

    let steps = Int(generator.next() % 24) + 1
    for _ in 0 ..< steps {
      switch generator.next() % 8 {
      case 0:
        handle(machine.start())
      case 1:
        let value = nextWrite
        nextWrite += 1
        let canAccept =
          !cancelled && !machine.isClosed && !finished && !machine.finishRequestedBeforeStart
        if canAccept { acceptedWrites.append(value) }
        handle(machine.write(value))
      case 2:
        handle(machine.finish())
      case 3:
        handle(machine.receiveNextMessages(Int(generator.next() % 3)))
      case 4:
        let (action, drain) = machine.cancel()
        if case .cancel = action { cancelled = true }
        if drain { drainScheduled = true }
        handle(action)
      case 5, 6:
        let delivery: Machine.Delivery
        if generator.next() % 5 == 0 {
          delivery = .close(trailers: [:], error: nil)
        } else {
          delivery = .message(nextResponse)
        }
        let accepted = !closeReceived && !cancelled && !machine.isClosed
        if accepted {
          if case .message = delivery {
            receivedResponses.append(nextResponse)
          } else {
            closeReceived = true
          }
        }
        nextResponse += 1
        if machine.receive(delivery) {
          precondition(accepted, "a drain was scheduled for an event that should be dropped")
          drainScheduled = true
        }
      default:
        // A drain runs part of the way (or all of it).
        guard drainScheduled else { continue }
        let count = Int(generator.next() % 3) + 1
        for _ in 0 ..< count {
          guard let (delivery, _) = machine.nextDelivery() else {
            drainScheduled = false
            break
          }
          delivered.append(delivery)
        }
      }
    }
    if drainScheduled {
      delivered += machine.drainAll()
    }

    // Writes reached the RPC in program order, exactly those the machine accepted.
    #expect(started ? sentWrites == acceptedWrites : sentWrites.isEmpty)
    // Close at most once, and last.
    let closes = delivered.indices.filter { delivered[$0].isClose }
    #expect(closes.count <= 1)
    if let close = closes.first {
      #expect(close == delivered.count - 1)
    }
    if cancelled {
      #expect(closes.count == 1)
      if let last = delivered.last, last.isClose, last.closeError?.message == "Canceled by app" {
        // The cancel close.
      } else {
        Issue.record(
          "a cancelled call did not close with Canceled by app: \(delivered.map(\.kind))"
        )
      }
    }
    // Messages in the order they came, a subsequence of those received.
    let messages = delivered.compactMap { $0.messageValue }
    #expect(messages == messages.sorted())
    #expect(Set(messages).isSubset(of: Set(receivedResponses)))
    if !cancelled, closeReceived {
      #expect(messages == receivedResponses)
    }
  }
}

extension GRPCCall2StateMachineTests {
  /// The call's request path, as the machine holds it (it only passes it on).
  typealias Link = NullRequestLink

  /// Stands for the call, which the machine holds from start to close.
  final class Owner: Sendable {}

  // MARK: Lifetime

  /// A machine with a request path whose start a thread is performing, for `owner`.
  static func startBeingPerformed(by owner: Owner) throws -> Machine {
    var machine = Machine()
    machine.attach(head: Link())
    let start = machine.start()
    let scheduled = machine.schedule(start, owner: owner)
    _ = try #require(scheduled)
    return machine
  }

  @Test("one thread performs at a time: actions decided meanwhile wait for it, in order")
  func actionsQueueBehindThePerformer() throws {
    var machine = Machine()
    let link = Link()
    machine.attach(head: link)
    let owner = Owner()

    let start = machine.start()
    let scheduled = machine.schedule(start, owner: owner)
    let first = try #require(scheduled)
    #expect(first.map(\.isStartRPC) == [true])
    #expect(first.head === link)
    // Another thread drives the call while the first performs.
    let write = machine.write(Data([1]))
    let queuedWrite = machine.schedule(write, owner: owner)
    let finish = machine.finish()
    let queuedFinish = machine.schedule(finish, owner: owner)
    let lateWrite = machine.write(Data([2]))
    let droppedWrite = machine.schedule(lateWrite, owner: owner)
    #expect(queuedWrite == nil && queuedFinish == nil)
    #expect(droppedWrite == nil, "after finish")

    let (next, released) = machine.performed()
    let batch = try #require(next)
    #expect(batch.map(\.isWrite) == [true, false])
    #expect(Array(batch).last?.isFinish == true)
    #expect(released == nil)
    let (after, releasedAfter) = machine.performed()
    #expect(after == nil && releasedAfter == nil)
    // Nobody performs now: the next action goes to the thread that decides it.
    let demand = machine.receiveNextMessages(1)
    let performedAtOnce = machine.schedule(demand, owner: owner)
    #expect(performedAtOnce != nil)
  }

  @Test("the close lets go of the chain and of the call's hold on itself, once")
  func closeReleasesHeadAndOwner() throws {
    let owner = Owner()
    var machine = try Self.startBeingPerformed(by: owner)
    _ = machine.performed()

    let drain = machine.receive(.close(trailers: [:], error: nil))
    #expect(drain)
    let taken = machine.nextDelivery()
    let (delivery, released) = try #require(taken)
    #expect(delivery.isClose)
    let gone = try #require(released)
    #expect(gone.head != nil)
    #expect((gone.owner as? Owner) === owner)
    #expect(machine.head == nil)
    // Nothing reaches the chain after the close.
    let (cancel, _) = machine.cancel()
    let afterClose = machine.schedule(cancel, owner: owner)
    #expect(afterClose == nil)
    let more = machine.nextDelivery()
    #expect(more == nil)
    let (next, releasedLater) = machine.performed()
    #expect(next == nil && releasedLater == nil, "let go of once")
  }

  @Test("a close taken while a thread performs leaves the head to that thread")
  func closeWhilePerformingLeavesHeadToPerformer() throws {
    let owner = Owner()
    var machine = try Self.startBeingPerformed(by: owner)
    // While the start is performed, the application cancels from another thread: the cancel
    // waits for the performer, and its close is delivered first.
    let (cancel, drain) = machine.cancel()
    #expect(drain)
    let queued = machine.schedule(cancel, owner: owner)
    #expect(queued == nil)
    let taken = machine.nextDelivery()
    let (delivery, released) = try #require(taken)
    #expect(delivery.isClose)
    let gone = try #require(released)
    #expect(gone.head == nil, "the performer still has the cancel to pass on")
    #expect((gone.owner as? Owner) === owner)
    #expect(machine.head != nil)

    let (next, _) = machine.performed()
    #expect(try #require(next).map(\.isCancel) == [true])
    let (after, releasedHead) = machine.performed()
    #expect(after == nil)
    #expect(releasedHead != nil, "the performer lets go of the head when done")
    #expect(machine.head == nil)
  }

  @Test("a call cancelled before start never held itself")
  func cancelBeforeStartHoldsNothing() throws {
    var machine = Machine()
    machine.attach(head: Link())
    let (cancel, drain) = machine.cancel()
    #expect(drain)
    let scheduled = machine.schedule(cancel, owner: Owner())
    let batch = try #require(scheduled)
    #expect(batch.map(\.isCancel) == [true])
    let taken = machine.nextDelivery()
    let (_, released) = try #require(taken)
    let gone = try #require(released)
    #expect(gone.owner == nil)
    #expect(gone.head == nil, "the performing thread lets go of it")
    let (_, head) = machine.performed()
    #expect(head != nil)
  }

  @Test("drains are counted: one per burst of responses, a cancel's only when none runs")
  func drainsCounted() {
    var machine = Machine()
    let first = machine.receive(.initialMetadata([:]))
    let second = machine.receive(.message(Data([1])))
    #expect(first && !second)
    _ = machine.drainAll()
    let third = machine.receive(.message(Data([2])))
    #expect(third)
    #expect(machine.drainsScheduled == 2)
    // A cancel while a drain is scheduled rides on it.
    let whileDraining = machine.cancel().scheduleDrain
    #expect(!whileDraining)
    #expect(machine.drainsScheduled == 2)
    _ = machine.drainAll()
    // After the close, a cancel does nothing.
    let afterClose = machine.cancel().scheduleDrain
    #expect(!afterClose)
    #expect(machine.drainsScheduled == 2)

    var fresh = Machine()
    let cancelled = fresh.cancel().scheduleDrain
    #expect(cancelled)
    #expect(fresh.drainsScheduled == 1)
  }
}

/// A small deterministic generator, so a failing sequence can be replayed.
struct SplitMix64: RandomNumberGenerator {
  var state: UInt64

  init(seed: UInt64) {
    self.state = seed
  }

  mutating func next() -> UInt64 {
    self.state &+= 0x9E37_79B9_7F4A_7C15
    var z = self.state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

extension GRPCCall2.StateMachine {
  /// Takes every pending delivery, as a drain does.
  mutating func drainAll() -> [Delivery] {
    var all: [Delivery] = []
    while let (delivery, _) = self.nextDelivery() {
      all.append(delivery)
    }
    return all
  }

  var finishRequestedBeforeStart: Bool {
    if case .idle(let idle) = self.request { return idle.finishRequested }
    return false
  }
}

extension GRPCCall2.StateMachine.RequestAction {
  var isNone: Bool { if case .none = self { true } else { false } }
  var isStartRPC: Bool { if case .startRPC = self { true } else { false } }
  var isWrite: Bool { if case .write = self { true } else { false } }
  var isFinish: Bool { if case .finish = self { true } else { false } }
  var isDemand: Bool { if case .receiveNextMessages = self { true } else { false } }
  var isCancel: Bool { if case .cancel = self { true } else { false } }
}

extension GRPCCall2.StateMachine.Delivery {
  var kind: String {
    switch self {
    case .initialMetadata: "headers"
    case .message: "message"
    case .didWrite: "didWrite"
    case .close: "close"
    }
  }

  var isClose: Bool { if case .close = self { true } else { false } }
  var isInitialMetadata: Bool { if case .initialMetadata = self { true } else { false } }

  var messageValue: Int? {
    if case .message(let value) = self { return value as? Int }
    return nil
  }

  var closeError: GRPCError? {
    if case .close(_, let error) = self { return error }
    return nil
  }

  var closeTrailersAreNil: Bool {
    if case .close(let trailers, _) = self { return trailers == nil }
    return false
  }
}
