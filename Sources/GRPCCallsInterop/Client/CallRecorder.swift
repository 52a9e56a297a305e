public import Dispatch
public import Foundation
public import GRPCCalls
public import GRPCCore

/// A response handler that records everything a call delivers, for checks and for waiting.
///
/// It also records whether every callback ran on its queue and whether any callback came after
/// the close, so that tests can assert the delivery contract, not only the data.
public final class CallRecorder: GRPCResponseHandler {
  /// One callback, in the order it ran.
  public enum Event: Sendable {
    case initialMetadata(Metadata)
    case message(Data)
    case wrote
    case close(trailers: Metadata?, error: GRPCError?)
  }

  /// How a call closed: the trailers and the error, if any.
  public typealias Close = (trailers: Metadata?, error: GRPCError?)

  public let dispatchQueue: DispatchQueue
  private let queueKey = DispatchSpecificKey<UInt8>()
  private let state = LockedValue(State())
  private let onMessage: (@Sendable (_ message: Data, _ index: Int) -> Void)?
  private let onClose: (@Sendable (Close) -> Void)?

  private struct State {
    var events: [Event] = []
    var offQueueCallbacks = 0
  }

  /// Creates a recorder.
  ///
  /// - Parameters:
  ///   - queue: The queue callbacks must run on; a new serial queue by default.
  ///   - onMessage: Runs inside each message callback (on the queue), after it is recorded,
  ///     with the message's index: e.g. to cancel the call from within the callback.
  ///   - onClose: Runs inside the close callback (on the queue), after it is recorded: e.g. to
  ///     count closes across many calls without polling each recorder.
  public init(
    queue: DispatchQueue = DispatchQueue(label: "grpc-calls.recorder"),
    onMessage: (@Sendable (_ message: Data, _ index: Int) -> Void)? = nil,
    onClose: (@Sendable (Close) -> Void)? = nil
  ) {
    self.dispatchQueue = queue
    self.onMessage = onMessage
    self.onClose = onClose
    queue.setSpecific(key: self.queueKey, value: 1)
  }

  /// Everything delivered so far, in order.
  public var events: [Event] { self.state.withLock { $0.events } }

  /// The messages delivered so far.
  public var messages: [Data] {
    self.events.compactMap { if case .message(let data) = $0 { data } else { nil } }
  }

  /// The response headers, if delivered.
  public var initialMetadata: Metadata? {
    self.events.lazy.compactMap { if case .initialMetadata(let m) = $0 { m } else { nil } }.first
  }

  /// How many `didWriteData` callbacks ran.
  public var writeCount: Int {
    self.events.count { if case .wrote = $0 { true } else { false } }
  }

  /// How many closes were delivered (the contract says exactly one).
  public var closeCount: Int {
    self.events.count { if case .close = $0 { true } else { false } }
  }

  /// The close, once delivered.
  public var close: Close? {
    for case .close(let trailers, let error) in self.events { return (trailers, error) }
    return nil
  }

  /// Whether every callback ran on ``dispatchQueue``, in the order headers, messages, close,
  /// with nothing after the close.
  public var deliveryContractHeld: Bool {
    self.state.withLock { state in
      guard state.offQueueCallbacks == 0 else { return false }
      var sawMessageOrClose = false
      var sawClose = false
      for event in state.events {
        if sawClose { return false }
        switch event {
        case .initialMetadata:
          if sawMessageOrClose { return false }
        case .message:
          sawMessageOrClose = true
        case .wrote:
          break
        case .close:
          sawMessageOrClose = true
          sawClose = true
        }
      }
      return true
    }
  }

  /// Waits until `condition` holds for the recorder, or `seconds` pass.
  ///
  /// - Returns: Whether the condition held.
  @discardableResult
  public func wait(
    upTo seconds: Double = CloseWait.seconds,
    until condition: @Sendable (CallRecorder) -> Bool
  ) async -> Bool {
    await CloseWait.poll(upTo: seconds) { condition(self) }
  }

  /// Waits for the close and returns it, or `nil` if it did not come within `seconds`.
  public func waitForClose(upTo seconds: Double = CloseWait.seconds) async -> Close? {
    await self.wait(upTo: seconds) { $0.close != nil }
    return self.close
  }

  public func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.record(.initialMetadata(initialMetadata))
  }

  public func didReceiveData(_ data: any Sendable) {
    // A raw call delivers Data; anything else is recorded as empty so the count stays right.
    let index = self.record(.message(data as? Data ?? Data())) { state in
      state.events.count { if case .message = $0 { true } else { false } } - 1
    }
    self.onMessage?(data as? Data ?? Data(), index)
  }

  public func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.record(.close(trailers: trailingMetadata, error: error))
    self.onClose?((trailingMetadata, error))
  }

  public func didWriteData() {
    self.record(.wrote)
  }

  @discardableResult
  private func record(_ event: Event, then read: (State) -> Int = { _ in 0 }) -> Int {
    let onQueue = DispatchQueue.getSpecific(key: self.queueKey) != nil
    return self.state.withLock { state in
      if !onQueue { state.offQueueCallbacks += 1 }
      state.events.append(event)
      return read(state)
    }
  }
}
