/// Decides, as each queued response event runs, whether the handler still gets it.
///
/// ```
///            event ─┐
///   ┌──────┐        │ deliver     cancel()      ┌───────────┐  cancel close  ┌────────┐
///   │ open │ ◀──────┘ ───────────────────────▶ │ cancelled │ ─────────────▶ │ closed │
///   └──────┘                                   └───────────┘                └────────┘
///       │                    close (deliver)                                    ▲
///       └───────────────────────────────────────────────────────────────────────┘
/// ```
///
/// In `cancelled`, queued events and the RPC's own close are dropped; only the cancel close is
/// delivered. `closed` absorbs everything.
struct DeliveryState: Sendable {
  enum Phase: Sendable, Equatable {
    case open
    case cancelled
    case closed
  }

  private(set) var phase: Phase = .open

  /// Headers, messages and write acknowledgements: delivered only while open.
  func shouldDeliverEvent() -> Bool {
    self.phase == .open
  }

  /// The RPC's close: delivered once, only while open.
  mutating func shouldDeliverClose() -> Bool {
    guard self.phase == .open else { return false }
    self.phase = .closed
    return true
  }

  /// The application cancelled: everything still queued is dropped from now on.
  mutating func cancel() {
    if self.phase == .open {
      self.phase = .cancelled
    }
  }

  /// The cancel close: delivered unless the call already closed.
  mutating func shouldDeliverCancelClose() -> Bool {
    guard self.phase == .cancelled else { return false }
    self.phase = .closed
    return true
  }
}
