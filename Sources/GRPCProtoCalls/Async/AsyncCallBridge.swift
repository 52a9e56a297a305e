internal import Dispatch
internal import GRPCCalls
internal import GRPCCore

/// Turns a call's callbacks into `async` reads and writes.
///
/// The call delivers to it inline (no dispatch hop): every callback only takes a lock and
/// resumes a continuation. With flow control (streaming responses and streaming requests), a
/// reader that finds no message asks the call for one (`receiveNextMessages(1)`) and waits, so
/// a message is buffered here only when asked for and a reader that stops reading stops the
/// server (HTTP/2 back-pressure); each write waits for its `didWriteData`, so a writer cannot
/// run ahead of the transport. Without flow control (a unary response), the one message is kept
/// until read. The close wakes everyone waiting and lets go of the call, which ends the
/// call ↔ bridge cycle.
///
/// Once a server stream floods the client, the call may hand the rest of it over
/// (``ResponsePulling``): a reader that finds no message then reads the stream itself, in its
/// own task, without asking the call: its read is its demand. It takes the message it read
/// directly, unless the call has callbacks still to deliver (a message on its way when the
/// stream came: the message follows them) or is closing (the message is dropped): then the
/// reader waits for the callbacks. After the hand-over the stream's status is read, and the
/// call closes, when the reader asks for the message after the last; and cancelling the
/// reader's task while it waits for a message ends the call (`CANCELLED`), as it ends a read of
/// `GRPCClient`'s responses.
///
/// Not generic over the response type: the typed faces (``GRPCResponseStream``, the unary
/// methods) are generic functions the library runs unspecialized, and there every use of a type
/// built on the response type (this bridge's state, its continuations, its lock) would look its
/// metadata up in the runtime's cache, once per message of a stream. The bridge keeps messages
/// as `any Sendable` and the typed face casts each one back (``responseCast(_:to:)``), inlined
/// into the stream's iterator and so specialized in the caller's module. The call has already
/// checked each message's type with its marshaller, closing with `INTERNAL` on one of another
/// type.
final class AsyncCallBridge: GRPCResponseHandler, ResponseMessageSource {
  /// Never used: the call delivers inline.
  var dispatchQueue: DispatchQueue { .global() }
  let flowControlled: Bool
  /// The bridge's whole state, behind its one lock.
  private let state = LockedValue(State())

  /// What a reader takes next.
  private enum ReadStep: Sendable {
    case message(any Sendable)
    case end
    case fail(GRPCError)
    /// Read the next message from the stream (``ResponsePull``).
    case pull(ResponsePull)
  }

  private struct State {
    /// The call this bridge serves: set right after the call is made, let go of at the close.
    var call: GRPCCall2?
    var messages: [any Sendable] = []
    /// Whether the reader asked the call for a message that has not come yet.
    var asked = false
    /// The rest of the response stream, once the call handed it over (``ResponsePulling``).
    var pull: ResponsePull?
    /// Whether the call ever handed the stream over.
    var wasHandedStream = false
    var reader: CheckedContinuation<ReadStep?, Never>?
    var writers: [CheckedContinuation<Void, any Error>] = []
    /// Set at the close: `.success(trailers)` or the error.
    var closed: Result<Metadata, GRPCError>?
    var headers: Metadata?

    /// What the reader takes next, and the call to ask for a message first, if any; `nil`
    /// when there is nothing to take yet: `reader` then waits for a callback to wake it.
    /// `mayPull`: the reader may read the stream, if it has it; `false` while what it read last
    /// comes through the callbacks.
    mutating func nextStep(
      flowControlled: Bool,
      mayPull: Bool,
      reader: CheckedContinuation<ReadStep?, Never>?
    ) -> (step: ReadStep?, ask: GRPCCall2?) {
      if !self.messages.isEmpty {
        return (.message(self.messages.removeFirst()), nil)
      }
      switch self.closed {
      case .success?: return (.end, nil)
      case .failure(let error)?: return (.fail(error), nil)
      case nil: break
      }
      if let pull = self.pull, mayPull {
        return (.pull(pull), nil)
      }
      if let reader { self.reader = reader }
      guard self.pull == nil, !self.asked, flowControlled else { return (nil, nil) }
      self.asked = true
      return (nil, self.call)
    }
  }

  init(flowControlled: Bool) {
    self.flowControlled = flowControlled
  }

  /// The call this bridge serves; set once, right after the call is made, and let go of at the
  /// close.
  var call: GRPCCall2? {
    get { self.state.withLock { $0.call } }
    set { self.state.withLock { $0.call = newValue } }
  }

  /// Whether the call handed the response stream over, to be read by the reader's task (for
  /// tests).
  var wasHandedStream: Bool { self.state.withLock { $0.wasHandedStream } }

  /// The response headers, once they arrived.
  var headers: Metadata? { self.state.withLock { $0.headers } }

  /// The trailers of a call that closed with OK.
  var trailers: Metadata? {
    self.state.withLock { state in
      if case .success(let trailers)? = state.closed { return trailers }
      return nil
    }
  }

  // MARK: Reading

  /// The next message, `nil` after a clean close; throws the call's error.
  func nextMessage() async throws -> (any Sendable)? {
    var mayPull = true
    while true {
      switch await self.nextStep(mayPull: mayPull) {
      case .message(let message): return message
      case .end: return nil
      case .fail(let error): throw error
      case .pull(let pull):
        switch await pull.readNext() {
        case .message(let message):
          return self.inOrder(message)
        case .callbacks:
          mayPull = false
        case .notHanded:
          // The call's task took the stream back (the call was cancelled): what it reads
          // arrives through the callbacks.
          self.state.withLock { state in
            if state.pull === pull { state.pull = nil }
          }
        }
      }
    }
  }

  /// `pulled`, a message the reader read from the stream, or, if a callback buffered a message
  /// while it read, the first of those: `pulled` then waits behind them. (The call hands
  /// `pulled` over only when it has nothing left to deliver, so a message buffered meanwhile
  /// came before it.)
  private func inOrder(_ pulled: any Sendable) -> any Sendable {
    self.state.withLock { state in
      guard !state.messages.isEmpty else { return pulled }
      state.messages.append(pulled)
      return state.messages.removeFirst()
    }
  }

  /// The next step, waiting for a callback while there is nothing to take.
  private func nextStep(mayPull: Bool) async -> ReadStep {
    let (first, ask) = self.state.withLock {
      $0.nextStep(flowControlled: self.flowControlled, mayPull: mayPull, reader: nil)
    }
    ask?.receiveNextMessages(1)
    if let first { return first }
    while true {
      let step = await withCheckedContinuation {
        (continuation: CheckedContinuation<ReadStep?, Never>) in
        let (step, ask) = self.state.withLock {
          $0.nextStep(flowControlled: self.flowControlled, mayPull: mayPull, reader: continuation)
        }
        ask?.receiveNextMessages(1)
        if let step {
          continuation.resume(returning: step)
        }
      }
      if let step { return step }
    }
  }

  /// Waits for the close; returns the trailers or throws the call's error.
  func waitForClose() async throws -> Metadata {
    // Drain what is left; a unary-style caller reads its message first.
    while try await self.nextMessage() != nil {}
    return try self.state.withLock { try $0.closed!.get() }
  }

  // MARK: Writing

  /// Sends `message` and waits until the transport accepted it.
  ///
  /// - Throws: The call's error, or `CANCELLED` when it closed without one before accepting
  ///   the message.
  func write(_ message: any Sendable) async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let step: Result<GRPCCall2?, GRPCError> = self.state.withLock { state in
        if let closed = state.closed {
          if case .failure(let error) = closed { return .failure(error) }
          return .failure(
            GRPCError(code: .cancelled, message: "The call closed before the message was sent")
          )
        }
        state.writers.append(continuation)
        return .success(state.call)
      }
      switch step {
      case .failure(let closed): continuation.resume(throwing: closed)
      case .success(let call): call?.writeData(message)
      }
    }
  }

  // MARK: Callbacks

  func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.state.withLock { $0.headers = initialMetadata }
  }

  func didReceiveData(_ data: any Sendable) {
    let reader: CheckedContinuation<ReadStep?, Never>? = self.state.withLock { state in
      state.asked = false
      guard let reader = state.reader else {
        state.messages.append(data)
        return nil
      }
      state.reader = nil
      return reader
    }
    reader?.resume(returning: .message(data))
  }

  func didWriteData() {
    let writer = self.state.withLock { state in
      state.writers.isEmpty ? nil : state.writers.removeFirst()
    }
    writer?.resume()
  }

  func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    // The close is the last callback: the call is done with this bridge, and the bridge with
    // the call.
    let (reader, writers, call, pull) = self.state.withLock { state in
      state.closed = error.map { .failure($0) } ?? .success(trailingMetadata ?? [:])
      defer {
        state.reader = nil
        state.writers = []
        state.call = nil
        state.pull = nil
      }
      return (state.reader, state.writers, state.call, state.pull)
    }
    defer { withExtendedLifetime(call) {} }
    // Nothing reads the stream here any more: the call's task takes back what is left of it.
    pull?.release()
    reader?.resume(returning: error.map { .fail($0) } ?? .end)
    if let error {
      for writer in writers { writer.resume(throwing: error) }
    } else {
      // Writes not acknowledged by a clean close were not needed by the server.
      for writer in writers {
        writer.resume(
          throwing: GRPCError(
            code: .cancelled,
            message: "The call closed before the message was sent"
          )
        )
      }
    }
  }
}

extension AsyncCallBridge: ResponsePulling {
  func take(_ pull: ResponsePull) -> Bool {
    let taken: (Bool, CheckedContinuation<ReadStep?, Never>?) = self.state.withLock { state in
      guard state.closed == nil else { return (false, nil) }
      state.pull = pull
      state.wasHandedStream = true
      defer { state.reader = nil }
      return (true, state.reader)
    }
    // A reader waiting for a message reads the stream itself from now on.
    taken.1?.resume(returning: nil)
    return taken.0
  }
}
