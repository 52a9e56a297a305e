/// An event that happens once, for one task to wait for: `open()` wakes the waiter, or lets a
/// later `wait()` through at once.
final class OneShotLatch: Sendable {
  private enum State {
    case closed
    case waiting(CheckedContinuation<Void, Never>)
    case open
  }

  private let state = LockedValue(State.closed)

  func open() {
    let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
      defer { state = .open }
      if case .waiting(let continuation) = state { return continuation }
      return nil
    }
    waiter?.resume()
  }

  /// Waits until ``open()``; one waiter at most.
  func wait() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let isOpen = self.state.withLock { state in
        if case .open = state { return true }
        state = .waiting(continuation)
        return false
      }
      if isOpen {
        continuation.resume()
      }
    }
  }
}
