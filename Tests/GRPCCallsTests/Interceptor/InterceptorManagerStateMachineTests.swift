import Testing

@testable import GRPCCalls

@Suite("Interceptor manager state machine (no I/O)")
struct InterceptorManagerStateMachineTests {
  typealias Machine = GRPCInterceptorManager.StateMachine

  enum Event {
    case request(Machine.Request)
    case response(Machine.Response)
    case shutDown
  }

  static let start = Event.request(.start)
  static let write = Event.request(.write)
  static let finish = Event.request(.finish)
  static let cancel = Event.request(.cancel)
  static let demand = Event.request(.receiveNextMessages)
  static let headers = Event.response(.initialMetadata)
  static let message = Event.response(.message)
  static let wrote = Event.response(.didWrite)
  static let close = Event.response(.close)

  /// Feeds `events` to `machine`, returning whether each passed (`shutDown` always "passes").
  static func feed(_ machine: inout Machine, _ events: [Event]) -> [Bool] {
    events.map { event in
      switch event {
      case .request(let request): machine.pass(request)
      case .response(let response): machine.pass(response)
      case .shutDown:
        {
          machine.shutDown()
          return true
        }()
      }
    }
  }

  @Test("a normal call passes every event in order")
  func normalCall() {
    var machine = Machine()
    let passed = Self.feed(
      &machine,
      [
        Self.demand, Self.start, Self.write, Self.headers, Self.wrote, Self.message, Self.write,
        Self.finish, Self.demand, Self.message, Self.close,
      ]
    )
    #expect(passed.allSatisfy { $0 })
    #expect(machine.requestPhase == .halfClosed)
    #expect(machine.closed)
  }

  @Test("write before start, start twice, write after finish and finish twice are dropped")
  func misuse() {
    var machine = Machine()
    let passed = Self.feed(
      &machine,
      [Self.write, Self.finish, Self.start, Self.start, Self.finish, Self.write, Self.finish]
    )
    #expect(passed == [false, false, true, false, true, false, false])
  }

  @Test("cancel passes once from any phase; nothing passes down after it", arguments: [0, 1, 2])
  func cancelFromEveryPhase(requestsBefore: Int) {
    var machine = Machine()
    let before = Self.feed(&machine, Array([Self.start, Self.finish].prefix(requestsBefore)))
    #expect(before.allSatisfy { $0 })
    let passed = Self.feed(
      &machine,
      [Self.cancel, Self.cancel, Self.write, Self.demand, Self.start]
    )
    #expect(passed == [true, false, false, false, false])
    #expect(machine.requestPhase == .cancelled)
  }

  @Test("responses after a cancel still pass up: an interceptor may answer the call itself")
  func responsesAfterCancel() {
    var machine = Machine()
    let passed = Self.feed(
      &machine,
      [Self.start, Self.cancel, Self.headers, Self.message, Self.close]
    )
    #expect(passed.allSatisfy { $0 })
  }

  @Test("initial metadata passes once and only before any message")
  func initialMetadataOnce() {
    var machine = Machine()
    #expect(Self.feed(&machine, [Self.headers, Self.headers]) == [true, false])
    var late = Machine()
    #expect(Self.feed(&late, [Self.message, Self.headers]) == [true, false])
  }

  @Test("the close passes once; nothing passes up after it")
  func closeOnce() {
    var machine = Machine()
    let passed = Self.feed(
      &machine,
      [Self.message, Self.wrote, Self.close, Self.close, Self.message, Self.wrote]
    )
    #expect(passed == [true, true, true, false, false, false])
  }

  @Test("after the close only a cancel still passes down, once")
  func cancelAfterClose() {
    var machine = Machine()
    let passed = Self.feed(
      &machine,
      [Self.start, Self.close, Self.write, Self.finish, Self.cancel, Self.cancel]
    )
    #expect(passed == [true, true, false, false, true, false])
  }

  @Test("a retry takes requests back to initialized, after a cancel too; not after the close")
  func restart() {
    var machine = Machine()
    #expect(
      Self.feed(&machine, [Self.start, Self.write, Self.finish, Self.cancel]).allSatisfy { $0 }
    )
    machine.restartRequests()
    #expect(machine.requestPhase == .initialized)
    #expect(Self.feed(&machine, [Self.start, Self.write, Self.finish]) == [true, true, true])
    #expect(Self.feed(&machine, [Self.close]) == [true])
    machine.restartRequests()
    #expect(machine.requestPhase == .halfClosed)
    #expect(Self.feed(&machine, [Self.start]) == [false])
  }

  @Test("shut down: nothing passes either way but one cancel")
  func shutDown() {
    var machine = Machine()
    let passed = Self.feed(
      &machine,
      [Self.start, .shutDown, Self.write, Self.message, Self.close, Self.cancel]
    )
    #expect(passed == [true, true, false, false, false, true])
    #expect(machine.isShutDown)
  }
}
