internal import GRPCCalls
internal import GRPCCore

/// What a ``GRXWriter`` writes to (gRPC Objective-C's `GRXWriteable`).
///
/// A writer calls ``writeValue(_:)`` for each value, then ``writesFinished(withError:)``
/// exactly once (unless it is stopped by hand with `state = .finished`). The calls never
/// overlap and come in order, but not on any particular thread.
public protocol GRXWriteable: AnyObject, Sendable {
  /// The next value.
  func writeValue(_ value: any Sendable)

  /// No more values: `error` is `nil` when the writer ended normally.
  func writesFinished(withError error: (any Error)?)
}

/// A writeable made of closures: gRPC Objective-C's `+[GRXWriteable writeableWith…Handler:]`.
///
/// ```swift
/// let writeable = GRXHandlerWriteable(singleHandler: { value, error in
///   print(value ?? "none", error ?? "no error")
/// })
/// GRXWriter(value: 42).start(with: writeable)
/// ```
public final class GRXHandlerWriteable: GRXWriteable {
  private let handlers: Handlers
  /// Whether the single handler has been called (it is called once).
  private let singleCalled = LockedValue(false)

  private enum Handlers: Sendable {
    case values(
      value: @Sendable (any Sendable) -> Void,
      completion: @Sendable ((any Error)?) -> Void
    )
    case single(@Sendable ((any Sendable)?, (any Error)?) -> Void)
    case events(@Sendable (Bool, (any Sendable)?, (any Error)?) -> Void)
  }

  /// Calls `valueHandler` for each value and `completionHandler` once at the end.
  public init(
    valueHandler: @escaping @Sendable (any Sendable) -> Void,
    completionHandler: @escaping @Sendable ((any Error)?) -> Void = { _ in }
  ) {
    self.handlers = .values(value: valueHandler, completion: completionHandler)
  }

  /// Calls `singleHandler` exactly once: with the first value, or with the error the writer
  /// finished with, or — when it finished without a value — with `INTERNAL` (13) "The writer
  /// finished without producing any value." Later values and the end are ignored.
  public init(singleHandler: @escaping @Sendable ((any Sendable)?, (any Error)?) -> Void) {
    self.handlers = .single(singleHandler)
  }

  /// Calls `eventHandler(false, value, nil)` for each value, then `eventHandler(true, nil,
  /// error)` once, last.
  public init(
    eventHandler: @escaping @Sendable (_ done: Bool, (any Sendable)?, (any Error)?) -> Void
  ) {
    self.handlers = .events(eventHandler)
  }

  public func writeValue(_ value: any Sendable) {
    switch self.handlers {
    case .values(let handler, _):
      handler(value)
    case .single(let handler):
      if self.claimSingle() { handler(value, nil) }
    case .events(let handler):
      handler(false, value, nil)
    }
  }

  public func writesFinished(withError error: (any Error)?) {
    switch self.handlers {
    case .values(_, let completion):
      completion(error)
    case .single(let handler):
      guard self.claimSingle() else { return }
      handler(
        nil,
        error
          ?? GRPCError(
            code: .internalError,
            message: "The writer finished without producing any value."
          )
      )
    case .events(let handler):
      handler(true, nil, error)
    }
  }

  private func claimSingle() -> Bool {
    self.singleCalled.withLock { called in
      defer { called = true }
      return !called
    }
  }
}
