import Testing

@testable import GRPCCalls

@Suite("Response delivery state (no I/O)")
struct DeliveryStateTests {
  /// Feeds events in order and returns what each decided.
  private func feed(_ events: [Event], to state: inout DeliveryState) -> [Bool] {
    events.map { event in
      switch event {
      case .event: state.shouldDeliverEvent()
      case .close: state.shouldDeliverClose()
      case .cancel:
        { state.cancel(); return true }()
      case .cancelClose: state.shouldDeliverCancelClose()
      }
    }
  }

  enum Event {
    case event, close, cancel, cancelClose
  }

  @Test("events flow while open; the close is delivered once; nothing after it")
  func closeOnce() {
    var state = DeliveryState()
    let decided = self.feed([.event, .close, .event, .close, .cancel, .cancelClose], to: &state)
    #expect(decided == [true, true, false, false, true, false])
    #expect(state.phase == .closed)
  }

  @Test("after cancel, queued events and the RPC's close are dropped; the cancel close runs once")
  func cancelDropsQueued() {
    var state = DeliveryState()
    let decided = self.feed([.cancel, .event, .close, .cancelClose, .cancelClose], to: &state)
    #expect(decided == [true, false, false, true, false])
    #expect(state.phase == .closed)
  }

  @Test("cancel twice is the same as once")
  func cancelTwice() {
    var state = DeliveryState()
    let decided = self.feed([.cancel, .cancel, .cancelClose, .cancelClose], to: &state)
    #expect(decided == [true, true, true, false])
  }
}
