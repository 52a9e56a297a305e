internal import Synchronization

/// The messages the application asked for with `receiveNextMessages(_:)` and has not yet been
/// given: the read side of flow control (L49).
///
/// The response reader takes one unit before delivering each message and, with none left,
/// suspends, and with it the reading of the HTTP/2 stream. Demand accumulates and may be added
/// before the call starts. A waiting reader stops with `CancellationError` when its task is
/// cancelled (the app cancelled, or the deadline passed).
final class MessageDemand: Sendable {
  private struct State {
    var available = 0
    var waiter: CheckedContinuation<Void, any Error>?
  }

  private let state = Mutex(State())

  /// Adds `count` to the demand; `count` ≤ 0 does nothing.
  func add(_ count: Int) {
    guard count > 0 else { return }
    let waiter: CheckedContinuation<Void, any Error>? = self.state.withLock { state in
      state.available += count
      guard let waiter = state.waiter else { return nil }
      // The waiter takes its unit now, so a later take() sees the rest.
      state.available -= 1
      state.waiter = nil
      return waiter
    }
    waiter?.resume()
  }

  /// Takes one unit, waiting until there is one.
  func take() async throws {
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
        let ready: Bool = self.state.withLock { state in
          if state.available > 0 {
            state.available -= 1
            return true
          }
          state.waiter = continuation
          return false
        }
        if ready {
          continuation.resume()
        } else if Task.isCancelled {
          self.cancelWaiter()
        }
      }
    } onCancel: {
      self.cancelWaiter()
    }
  }

  private func cancelWaiter() {
    let waiter = self.state.withLock { state in
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume(throwing: CancellationError())
  }
}
