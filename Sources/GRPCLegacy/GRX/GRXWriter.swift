public import Dispatch
internal import GRPCCalls
internal import GRPCCore

/// A source of values that pushes them into a ``GRXWriteable`` (gRPC Objective-C's
/// `GRXWriter`), which a v1 call reads its requests from and writes its responses to.
///
/// ```swift
/// let writer = GRXWriter(values: [1, 2, 3])
/// writer.start(with: GRXHandlerWriteable(valueHandler: { print($0) }))
/// ```
///
/// A writer is started once. Setting ``state`` to `.paused` holds values back until it is set
/// to `.started`; setting it to `.finished` stops it at once with no further callback;
/// ``finish(withError:)`` ends it now, telling the writeable. Every method is thread-safe, and a
/// writeable may call them from inside its callbacks. Subclasses write with ``emit(_:)`` and
/// ``emitFinish(withError:)``.
open class GRXWriter: @unchecked Sendable {
  // @unchecked: all mutable state is in `storage`, behind its lock.

  private struct Storage {
    var machine = StateMachine()
    var writeable: (any GRXWriteable)?
  }

  private let storage = LockedValue(Storage())

  /// A writer that writes nothing until a subclass emits.
  public init() {}

  /// A writer of one value, then the end (`+writerWithValue:`).
  public convenience init(value: any Sendable) {
    self.init(values: [value])
  }

  /// A writer of `values` in order, then the end (`+writerWithEnumerator:`).
  public convenience init(values: some Sequence<any Sendable>) {
    self.init()
    for value in values { self.emit(value) }
    self.emitFinish(withError: nil)
  }

  /// A writer that ends with `error` without writing a value (`+writerWithError:`).
  public convenience init(error: any Error) {
    self.init()
    self.emitFinish(withError: error)
  }

  /// A writer that ends at once without writing a value (`+emptyWriter`).
  public static func empty() -> GRXWriter {
    let writer = GRXWriter()
    writer.emitFinish(withError: nil)
    return writer
  }

  /// The writer's state; set `.paused` to hold values back, `.started` to resume, `.finished`
  /// to stop it with no further callback. Other changes are ignored.
  public var state: GRXWriterState {
    get { self.storage.withLock { $0.machine.state } }
    set {
      let (result, before, after, released) = self.storage.withLock { storage in
        let before = storage.machine.state
        let result = storage.machine.set(newValue)
        var released: (any GRXWriteable)?
        if case .stopped = result { swap(&released, &storage.writeable) }
        return (result, before, storage.machine.state, released)
      }
      _ = released  // the writeable is let go here, outside the lock
      if case .resumed = result { self.drain() }
      if after != before { self.writerStateDidChange(after) }
    }
  }

  /// Starts writing to `writeable`.
  ///
  /// A writer is started once: starting it again, or after it finished, tells this
  /// `writeable` `writesFinished(withError:)` with `FAILED_PRECONDITION` saying so, and leaves
  /// the writer alone.
  public func start(with writeable: any GRXWriteable) {
    let result = self.storage.withLock { storage -> StateMachine.StartResult in
      let result = storage.machine.start()
      if case .started = result { storage.writeable = writeable }
      return result
    }
    switch result {
    case .started:
      self.writerStateDidChange(.started)
      self.drain()
    case .refused(let state):
      let already = state == .finished ? "finished" : "started"
      writeable.writesFinished(
        withError: GRPCError(
          code: .failedPrecondition,
          message:
            "The writer has already \(already): a GRXWriter can be started once; make a new one"
        )
      )
    }
  }

  /// Ends the writer now: values not yet written are dropped and the writeable is told
  /// `writesFinished(withError: error)`, even while paused.
  public func finish(withError error: (any Error)?) {
    let owed = self.storage.withLock { $0.machine.finishNow(error) }
    if owed { self.drain() }
  }

  /// Ends the writer now, for a subclass that ends it from outside its stream (a cancel): the
  /// state is `.finished` when this returns, values not yet written are dropped, and the
  /// writeable is told `writesFinished(withError:)` asynchronously on `queue` — with `error`,
  /// or the error of a finish the writer held while paused. Does nothing once the writer
  /// finished.
  ///
  /// - Returns: Whether the writer was not finished yet.
  @discardableResult
  public func finishNow(withError error: (any Error)?, on queue: DispatchQueue) -> Bool {
    let (finish, writeable) = self.storage.withLock { storage in
      let finish = storage.machine.finishForOwner(error)
      var writeable: (any GRXWriteable)?
      if case .none = finish {} else { swap(&writeable, &storage.writeable) }
      return (finish, writeable)
    }
    switch finish {
    case .none:
      return false
    case .unstarted:
      return true
    case .deliver(let error):
      if let writeable {
        let delivery = UnsafeDelivery(writeable: writeable, error: error)
        queue.async { delivery.writeable.writesFinished(withError: delivery.error) }
      }
      return true
    }
  }

  /// Writes `value` after those before it (for subclasses): held while paused or not started,
  /// ignored once the writer finished or an end was emitted.
  public func emit(_ value: any Sendable) {
    self.storage.withLock { $0.machine.enqueue(.value(value)) }
    self.drain()
  }

  /// Ends the writer after the values emitted before (for subclasses): a writer paused then
  /// resumed still delivers them first.
  public func emitFinish(withError error: (any Error)?) {
    self.storage.withLock { $0.machine.enqueue(.finish(error)) }
    self.drain()
  }

  /// Called after the state changed (started, paused, resumed, finished by hand), outside any
  /// lock; a writer that reads from a source pauses or resumes the source here. Does nothing
  /// by default.
  open func writerStateDidChange(_ state: GRXWriterState) {}

  /// Delivers what is pending, one item at a time, outside the lock, unless another thread is
  /// already doing so (it then delivers what was added meanwhile).
  private func drain() {
    guard self.storage.withLock({ $0.machine.beginDelivery() }) else { return }
    while true {
      let next = self.storage.withLock { storage -> (StateMachine.Item, any GRXWriteable)? in
        guard let item = storage.machine.nextDelivery(), let writeable = storage.writeable else {
          return nil
        }
        if case .finish = item { storage.writeable = nil }
        return (item, writeable)
      }
      guard let (item, writeable) = next else { return }
      switch item {
      case .value(let value):
        writeable.writeValue(value)
      case .finish(let error):
        writeable.writesFinished(withError: error)
      }
    }
  }
}

/// A writeable and the error it is told, handed to the response queue: the writeable is used
/// there only, after the writer let it go.
private struct UnsafeDelivery: @unchecked Sendable {
  let writeable: any GRXWriteable
  let error: (any Error)?
}
