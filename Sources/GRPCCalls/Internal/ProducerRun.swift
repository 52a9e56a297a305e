/// The run of a request producer that another task may wait for: ``waitIfStarted()`` returns
/// at once when the producer has not started (it may never) or has ended, and otherwise when it
/// ends.
final class ProducerRun: Sendable {
  private enum State {
    case notStarted
    case running(waiter: CheckedContinuation<Void, Never>?)
    case ended
  }

  private let state = LockedValue(State.notStarted)

  func started() {
    self.state.withLock { state in
      if case .notStarted = state { state = .running(waiter: nil) }
    }
  }

  func ended() {
    let waiter: CheckedContinuation<Void, Never>? = self.state.withLock { state in
      defer { state = .ended }
      if case .running(let waiter) = state { return waiter }
      return nil
    }
    waiter?.resume()
  }

  /// Waits for a running producer to end; one waiter at most.
  func waitIfStarted() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let wait = self.state.withLock { state in
        guard case .running = state else { return false }
        state = .running(waiter: continuation)
        return true
      }
      if !wait {
        continuation.resume()
      }
    }
  }
}
