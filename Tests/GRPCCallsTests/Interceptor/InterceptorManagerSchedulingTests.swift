import Dispatch
import GRPCCore
import Testing

@testable import GRPCCalls

@Suite("Interceptor manager state machine: running events, neighbours (no I/O)")
struct InterceptorManagerSchedulingTests {
  typealias Machine = GRPCInterceptorManager.StateMachine

  /// An element below, as the manager sees it.
  typealias Below = NullRequestLink

  /// The element above, with the queue it delivers on.
  final class Above: ResponseLink {
    let deliveryQueue: DispatchQueue?

    init(deliveryQueue: DispatchQueue? = nil) {
      self.deliveryQueue = deliveryQueue
    }

    func receive(_ response: CallResponse, withinDeliveryQueue: Bool) {}
  }

  enum Kind {
    case inline
    /// On a queue of its own.
    case queued
    /// On its default queue, which targets the queue of the element above.
    case queuedTargetingAbove
  }

  /// The rest of the chain, as the machine carries it; never made into elements here (the
  /// tests hand the machine a `Below` themselves).
  static let chain = InterceptorChain(
    factories: [],
    runner: .init(pool: .shared, transportType: .insecure, transport: nil)
  )
  static let work: Machine.Work = {}
  static var start: RequestBatch.Request {
    .start(try! GRPCRequestOptions(host: "127.0.0.1:1", path: "/s/m"), GRPCCallOptions())
  }

  /// A machine with an interceptor of `kind` attached, and the element above.
  static func attached(_ kind: Kind) -> (Machine, Above) {
    let above = Above(deliveryQueue: DispatchQueue(label: "above"))
    var machine = Machine(previous: above, rest: Self.chain)
    let manager = GRPCInterceptorManager(rest: Self.chain, previous: above)
    let interceptor =
      switch kind {
      case .inline: GRPCInterceptor(manager: manager, executesInline: true)
      case .queued: GRPCInterceptor(manager: manager, dispatchQueue: DispatchQueue(label: "own"))
      case .queuedTargetingAbove: GRPCInterceptor(manager: manager)
      }
    let queue = machine.attach(interceptor)
    #expect(queue == nil)
    return (machine, above)
  }

  // MARK: Running events

  @Test("inline: an idle interceptor runs an event now; one that comes meanwhile waits for it")
  func inlineRuns() throws {
    var (machine, _) = Self.attached(.inline)
    let first = machine.run(Self.work)
    #expect(first.isNow)
    let second = machine.run(Self.work)
    #expect(second.isLater)
    #expect(machine.pendingCount == 1)
    let burst = machine.nextBurst()
    #expect(burst.events == 1)
    let done = machine.nextBurst()
    #expect(done.isDone)
    #expect(!machine.running)
    let again = machine.run(Self.work)
    #expect(again.isNow)
  }

  @Test("queued: the first event schedules one block; the rest run in it, in one burst, in order")
  func queuedRuns() {
    var (machine, _) = Self.attached(.queued)
    let first = machine.run(Self.work)
    #expect(first.scheduled != nil)
    let second = machine.run(Self.work)
    let third = machine.run(Self.work)
    #expect(second.isLater && third.isLater)
    let burst = machine.nextBurst()
    #expect(burst.events == 3)
    let done = machine.nextBurst()
    #expect(done.isDone)
    let again = machine.run(Self.work)
    #expect(again.scheduled != nil)
  }

  @Test("events before the attach wait, and the attach schedules them on the interceptor's queue")
  func beforeAttach() {
    let above = Above()
    var machine = Machine(previous: above, rest: Self.chain)
    let early = machine.run(Self.work)
    #expect(early.isLater)
    let manager = GRPCInterceptorManager(rest: Self.chain, previous: above)
    let own = DispatchQueue(label: "own")
    let interceptor = GRPCInterceptor(manager: manager, dispatchQueue: own, executesInline: true)
    let queue = machine.attach(interceptor)
    #expect(queue === own)
    // Inline, but its early events still wait for that block.
    let meanwhile = machine.run(Self.work)
    #expect(meanwhile.isLater)
    let burst = machine.nextBurst()
    #expect(burst.events == 2)
  }

  @Test("the factory made no interceptor: the events waiting are handed back")
  func discard() {
    var machine = Machine(previous: Above(), rest: Self.chain)
    _ = machine.run(Self.work)
    let (released, events) = machine.discard()
    #expect(events.count == 1)
    #expect(released.previous != nil)
    #expect(machine.isShutDown)
  }

  // MARK: Requests

  @Test("the first request makes the elements below; requests are held until the burst is over")
  func requestsMakeNextThenHold() throws {
    var (machine, _) = Self.attached(.queued)
    _ = machine.run(Self.work)
    _ = machine.nextBurst()
    let first = machine.request(.start, Self.start)
    let attempt = try #require(first.makeNextAttempt)
    #expect(attempt == 0)
    let current = machine.madeNext(Below(), attempt: attempt, for: Self.start)
    #expect(current)
    let write = machine.request(.write, .write(1))
    #expect(write.isHeld)
    let misuse = machine.request(.start, Self.start)
    #expect(misuse.isDropped)
    let delivery = machine.nextBurst()
    #expect(delivery.passedOn?.requests.isEmpty == false)
    let done = machine.nextBurst()
    #expect(done.isDone)
  }

  @Test("elements made for an attempt that a retry ended meanwhile are not kept")
  func madeForOldAttempt() throws {
    var (machine, _) = Self.attached(.inline)
    let first = machine.request(.start, Self.start)
    let attempt = try #require(first.makeNextAttempt)
    _ = machine.resetNext()
    let current = machine.madeNext(Below(), attempt: attempt, for: .cancel)
    #expect(!current)
    #expect(machine.attempt == 1)
  }

  @Test("a retry hands back the elements below and drops what was held for them")
  func retry() throws {
    var (machine, _) = Self.attached(.inline)
    let first = machine.request(.start, Self.start)
    let attempt = try #require(first.makeNextAttempt)
    let below = Below()
    _ = machine.madeNext(below, attempt: attempt, for: Self.start)
    let discarded = machine.resetNext()
    #expect(discarded === below)
    #expect(machine.interceptor(forAttempt: 0) == nil)
    #expect(machine.interceptor(forAttempt: 1) != nil)
    // Nothing left to deliver: the held start went with the discarded elements.
    let burst = machine.nextBurst()
    #expect(burst.isDone)
    let again = machine.request(.start, Self.start)
    #expect(again.makeNextAttempt == 1)
  }

  // MARK: Responses

  @Test(
    "a response is delivered now, unless a block of a queue targeting the element above runs",
    arguments: [(Kind.inline, false), (.queued, false), (.queuedTargetingAbove, true)]
  )
  func responses(kind: Kind, heldWhileRunning: Bool) {
    var (machine, above) = Self.attached(kind)
    let idle = machine.respond(.initialMetadata(Metadata()))
    #expect(idle.step.deliversTo === above)
    _ = machine.run(Self.work)
    let running = machine.respond(.message(1))
    if heldWhileRunning {
      #expect(running.step.isHeld)
      // The block delivers it before it lets go.
      let burst = machine.nextBurst()
      #expect(burst.passedOn?.responses.count == 1)
    } else {
      #expect(running.step.deliversTo === above)
    }
  }

  @Test("held responses keep the block running until it delivers them")
  func heldResponsesKeepTheBlock() {
    var (machine, _) = Self.attached(.queuedTargetingAbove)
    _ = machine.run(Self.work)
    let events = machine.nextBurst()
    #expect(events.events == 1)
    // From another thread, while the block is still running.
    let close = machine.respond(.close(trailers: nil, error: nil))
    #expect(close.step.isHeld)
    #expect(machine.running)
    let delivery = machine.nextBurst()
    #expect(delivery.passedOn?.responses.count == 1)
    let done = machine.nextBurst()
    #expect(done.isDone)
  }

  @Test("the close lets go of the neighbours and cancels elements below that have not closed")
  func closeReleases() throws {
    for belowClosed in [false, true] {
      var (machine, above) = Self.attached(.inline)
      let first = machine.request(.start, Self.start)
      let attempt = try #require(first.makeNextAttempt)
      let below = Below()
      _ = machine.madeNext(below, attempt: attempt, for: .finish)
      if belowClosed {
        machine.nextDidClose(attempt: attempt)
      }
      let close = machine.respond(.close(trailers: nil, error: nil))
      let released = try #require(close.released)
      #expect(released.previous === above)
      #expect(released.next === below)
      #expect(released.interceptor != nil)
      #expect((released.orphan === below) == !belowClosed)
      #expect(machine.interceptor(forAttempt: nil) == nil)
      let late = machine.respond(.message(1))
      #expect(late.step.isDropped)
      // Late events still run, into nothing, instead of waiting forever.
      let event = machine.run(Self.work)
      #expect(event.isNow)
    }
  }
}

extension GRPCInterceptorManager.StateMachine.RunAction {
  var isNow: Bool { if case .now = self { true } else { false } }
  var isLater: Bool { if case .later = self { true } else { false } }
  var scheduled: DispatchQueue? { if case .schedule(let queue) = self { queue } else { nil } }
}

extension GRPCInterceptorManager.StateMachine.Burst {
  var events: Int? { if case .run(let events) = self { events.count } else { nil } }
  var passedOn: GRPCInterceptorManager.StateMachine.PassedOn? {
    if case .deliver(let passedOn) = self { passedOn } else { nil }
  }
  var isDone: Bool { if case .done = self { true } else { false } }
}

extension GRPCInterceptorManager.StateMachine.RequestStep {
  var makeNextAttempt: Int? { if case .makeNext(_, let attempt) = self { attempt } else { nil } }
  var isHeld: Bool { if case .held = self { true } else { false } }
  var isDropped: Bool { if case .dropped = self { true } else { false } }
}

extension GRPCInterceptorManager.StateMachine.ResponseStep {
  var deliversTo: (any ResponseLink)? { if case .deliver(let link) = self { link } else { nil } }
  var isHeld: Bool { if case .held = self { true } else { false } }
  var isDropped: Bool { if case .dropped = self { true } else { false } }
}
