internal import GRPCCore

/// What reads a call's responses in its own task, when the call hands it the stream
/// (``GRPCCall2`` offers one to a handler that delivers inline and adopts this): the library's
/// async faces.
package protocol ResponsePulling: AnyObject {
  /// Takes `pull`, the rest of the call's response stream; `false` when the handler no longer
  /// reads (its call closed).
  func take(_ pull: ResponsePull) -> Bool
}

/// The rest of a stream that floods the client, handed by the call's reading task to the task
/// that consumes the responses, which from then on reads the transport itself.
///
/// Read by the call's task, each message of a flooding stream would wake the consumer's task,
/// and each request for the next (flow control keeps one between them) the reading task.
/// Handed over, the consumer reads a part when it wants a message, on its own thread, and no
/// task switch separates it from the transport while the transport has parts buffered. Its
/// read is its demand: it reads a message only when it wants one, so the server is held back
/// exactly as by a reader that asks for each message. A message it reads goes to it directly
/// when the call would deliver it at once (``ResponseLink/receivePulled(_:)``), otherwise
/// through the call's callbacks, which keep it in order with what they still deliver.
///
/// The call's task waits for what the consumer read last (``waitForEnd()``): the status, or a
/// failure. When that task is cancelled (the application's cancel, the deadline), or the
/// consumer will read no more, the stream is released (``release()``): the call's task takes it
/// back if the consumer is not reading; otherwise `stop` fails the stream under the consumer's
/// read, which then ends as the call's task would have ended it.
///
/// ```
///            readNext()               a message           the status or a failure
///  parked ─────────────▶ reading ─────────────▶ parked      reading ───────────▶ ended
///    │                      │
///    │ released             │ released: stop(), then the read ends    ──▶ ended, or
///    ▼                      ▼                                            reclaimed
///  reclaimed         reading (stop requested)
/// ```
///
/// The part source inside `read` is not `Sendable`. One task at a time reads it: the consumer
/// while the state is `reading` (set under the lock), the call's task once the state is
/// `ended` or `reclaimed`; the lock orders each hand-over.
package final class ResponsePull: @unchecked Sendable {
  /// What one read of the stream found.
  package enum Read {
    /// The next message, for the consumer to take.
    case message(any Sendable)
    /// A message that went through the call's callbacks, or was dropped because the call
    /// closed meanwhile: the consumer waits for the callbacks.
    case delivered
    /// The status, or a failure: the call's task closes the call with it.
    case ended(RPCOutcome)
  }

  /// What ``readNext()`` gives the consumer.
  package enum Next {
    /// The next message: the consumer takes it.
    case message(any Sendable)
    /// What the read found comes through the call's callbacks: a message, or the close.
    case callbacks
    /// The stream is no longer the consumer's (the call's task took it back, or it ended):
    /// nothing was read.
    case notHanded
  }

  private enum Phase {
    case parked
    case reading(stopRequested: Bool)
    /// The consumer read the end: the call's task takes the outcome.
    case ended(RPCOutcome)
    /// The call's task has the stream again.
    case reclaimed
  }

  private struct State {
    var phase = Phase.parked
    /// The call's task, waiting for the end.
    var waiter: CheckedContinuation<RPCOutcome?, Never>?

    /// Leaves `reading` after a read that found `outcome` (`nil`: a message); returns
    /// the waiter to resume and what to resume it with, if the stream left the consumer.
    mutating func finishRead(
      _ outcome: RPCOutcome?
    ) -> (CheckedContinuation<RPCOutcome?, Never>?, RPCOutcome?)? {
      guard case .reading(let stopRequested) = self.phase else { return nil }
      if let outcome {
        self.phase = .ended(outcome)
      } else if stopRequested {
        self.phase = .reclaimed
      } else {
        self.phase = .parked
        return nil
      }
      defer { self.waiter = nil }
      return (self.waiter, outcome)
    }
  }

  private let state = LockedValue(State())
  /// Reads parts until the next message, or the end of the stream.
  private let read: () async -> Read
  /// Makes the stream fail, so that a read waiting on the transport returns.
  private let stop: @Sendable () -> Void

  package init(read: @escaping () async -> Read, stop: @escaping @Sendable () -> Void) {
    self.read = read
    self.stop = stop
  }

  /// Reads the stream until the next message, or until its end; ``Next/notHanded``, without
  /// reading, when the stream is no longer the consumer's (the call's task took it back, or it
  /// ended).
  package func readNext() async -> Next {
    let mine = self.state.withLock { state in
      guard case .parked = state.phase else { return false }
      state.phase = .reading(stopRequested: false)
      return true
    }
    guard mine else { return .notHanded }
    let read = await self.read()
    let outcome: RPCOutcome?
    let next: Next
    switch read {
    case .message(let message): (outcome, next) = (nil, .message(message))
    case .delivered: (outcome, next) = (nil, .callbacks)
    case .ended(let end): (outcome, next) = (end, .callbacks)
    }
    if let (waiter, outcome) = self.state.withLock({ $0.finishRead(outcome) }) {
      waiter?.resume(returning: outcome)
    }
    return next
  }

  /// Waits until the consumer read the end of the stream, and returns how it ended; `nil` when
  /// the task was cancelled and took the stream back to read it itself.
  func waitForEnd() async -> RPCOutcome? {
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<RPCOutcome?, Never>) in
        let ready: RPCOutcome?? = self.state.withLock { state in
          switch state.phase {
          case .ended(let outcome): return .some(outcome)
          case .reclaimed: return .some(nil)
          case .parked, .reading:
            state.waiter = continuation
            return nil
          }
        }
        if let ready {
          continuation.resume(returning: ready)
        }
      }
    } onCancel: {
      self.release()
    }
  }

  /// Gives the stream back to the call's task: at once when the consumer is not reading it,
  /// otherwise by stopping the consumer's read. For the call's task when it is cancelled, and
  /// for a consumer that will read no more (its call closed).
  package func release() {
    enum Step {
      case resume(CheckedContinuation<RPCOutcome?, Never>?)
      case stop
      case none
    }
    let step: Step = self.state.withLock { state in
      switch state.phase {
      case .parked:
        state.phase = .reclaimed
        defer { state.waiter = nil }
        return .resume(state.waiter)
      case .reading(stopRequested: false):
        state.phase = .reading(stopRequested: true)
        return .stop
      case .reading(stopRequested: true), .ended, .reclaimed:
        return .none
      }
    }
    switch step {
    case .resume(let waiter): waiter?.resume(returning: nil)
    case .stop: self.stop()
    case .none: break
    }
  }
}
