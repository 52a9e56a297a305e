public import GRPCCalls
public import GRPCCore

/// Records what a v1 (GRPCLegacy) call's handler gets: responses, then one end, and whether
/// anything came after the end.
public final class LegacyRecorder<Response: Sendable>: Sendable {
  private let state = LockedValue(State())
  private let onResponse: (@Sendable (Int) -> Void)?

  private struct State {
    var responses: [Response] = []
    var ends = 0
    var error: GRPCError?
    var afterEnd = 0
  }

  /// - Parameter onResponse: Runs inside each response callback with the response's index.
  public init(onResponse: (@Sendable (Int) -> Void)? = nil) {
    self.onResponse = onResponse
  }

  public var responses: [Response] { self.state.withLock { $0.responses } }
  public var ended: Bool { self.state.withLock { $0.ends > 0 } }
  /// The error the call ended with, if any.
  public var error: GRPCError? { self.state.withLock { $0.error } }

  /// A v1 unary handler: `(response, error)`, expected once.
  public var handler: @Sendable (Response?, GRPCError?) -> Void {
    { response, error in
      if let response { self.record(response) }
      self.end(error)
    }
  }

  /// A v1 streaming event handler: `(done, response, error)`.
  public var eventHandler: @Sendable (Bool, Response?, GRPCError?) -> Void {
    { done, response, error in
      if let response { self.record(response) }
      if done { self.end(error) }
    }
  }

  private func record(_ response: Response) {
    let index = self.state.withLock { state -> Int in
      if state.ends > 0 { state.afterEnd += 1 }
      state.responses.append(response)
      return state.responses.count - 1
    }
    self.onResponse?(index)
  }

  private func end(_ error: GRPCError?) {
    self.state.withLock { state in
      if state.ends > 0 { state.afterEnd += 1 }
      state.ends += 1
      state.error = error
    }
  }

  /// Waits until `condition` holds, or `seconds` pass; returns whether it held.
  @discardableResult
  public func wait(
    upTo seconds: Double = CloseWait.seconds,
    until condition: @Sendable (LegacyRecorder) -> Bool
  ) async -> Bool {
    await CloseWait.poll(upTo: seconds) { condition(self) }
  }

  /// Waits for the end and checks it carries `code` (nil: success) and `message`, and that the
  /// handler saw exactly one end and nothing after it.
  public func expectEnd(_ code: RPCError.Code?, message: String? = nil) async throws {
    guard await self.wait(upTo: CloseWait.seconds, until: \.ended) else {
      throw InteropCaseFailure("the v1 call did not end within \(Int(CloseWait.seconds)) s")
    }
    let (ends, afterEnd, error) = self.state.withLock { ($0.ends, $0.afterEnd, $0.error) }
    guard ends == 1, afterEnd == 0 else {
      throw InteropCaseFailure(
        "the handler ended \(ends) times, with \(afterEnd) callbacks after the end"
      )
    }
    switch (code, error) {
    case (nil, nil): break
    case (nil, let error?): throw error
    case (let code?, nil): throw InteropCaseFailure("expected status \(code), the call succeeded")
    case (let code?, let error?):
      guard error.code == code else {
        throw InteropCaseFailure("expected status \(code), got \(error)")
      }
      if let message, error.message != message {
        throw InteropCaseFailure(
          "expected message \(message.debugDescription), got \(error.message.debugDescription)"
        )
      }
    }
  }
}
