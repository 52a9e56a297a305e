internal import Dispatch
internal import GRPCCalls
internal import GRPCCore

/// Turns a call's callbacks into `async` reads and writes.
///
/// The call delivers to it inline (no dispatch hop): every callback only takes a lock and
/// resumes a continuation. With flow control (streaming responses and streaming requests),
/// a reader that finds no message asks the call for one (`receiveNextMessages(1)`) and waits,
/// so at most one message is ever buffered here and a reader that stops reading stops the
/// server (HTTP/2 back-pressure); each write waits for its `didWriteData`, so a writer cannot
/// run ahead of the transport. Without it (a unary response), the one message is kept until
/// read. The close wakes everyone waiting and lets go of the call, which ends the
/// call ↔ bridge cycle.
///
/// Not generic over the response type: the typed faces (``GRPCResponseStream``, the unary
/// methods) are generic functions the library runs unspecialized, and there every use of a type
/// built on the response type (this bridge's state, its continuations, its lock) would look its
/// metadata up in the runtime's cache, once per message of a stream. The bridge keeps messages
/// as `any Sendable` and the typed face casts each
/// one back (``next(as:)``); the call has already checked each message's type with its
/// marshaller, closing with `INTERNAL` on one of another type.
final class AsyncCallBridge: GRPCResponseHandler {
  /// Never used: the call delivers inline.
  var dispatchQueue: DispatchQueue { .global() }
  let flowControlled: Bool
  /// The bridge's whole state, behind its one lock.
  private let state = LockedValue(State())

  private enum ReadStep {
    case resume(Result<(any Sendable)?, any Error>)
    case ask(GRPCCall2?)
    case wait
  }

  private struct State {
    /// The call this bridge serves: set right after the call is made, let go of at the close.
    var call: GRPCCall2?
    var messages: [any Sendable] = []
    var demandOutstanding = false
    var reader: CheckedContinuation<(any Sendable)?, any Error>?
    var writers: [CheckedContinuation<Void, any Error>] = []
    /// Set at the close: `.success(trailers)` or the error.
    var closed: Result<Metadata, GRPCError>?
    var headers: Metadata?
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

  /// The next message as a `Response`, `nil` after a clean close; throws the call's error.
  func next<Response>(as type: Response.Type) async throws -> Response? {
    guard let message = try await self.nextMessage() else { return nil }
    guard let response = message as? Response else {
      // Unreachable: the call's marshaller lets only responses through.
      throw GRPCError(
        code: .internalError,
        message:
          "The call delivered a \(Swift.type(of: message)) where \(Response.self) was expected"
      )
    }
    return response
  }

  /// The next message, `nil` after a clean close; throws the call's error.
  func nextMessage() async throws -> (any Sendable)? {
    try await withCheckedThrowingContinuation { continuation in
      let step: ReadStep = self.state.withLock { state in
        if !state.messages.isEmpty {
          return .resume(.success(state.messages.removeFirst()))
        }
        switch state.closed {
        case .success?: return .resume(.success(nil))
        case .failure(let error)?: return .resume(.failure(error))
        case nil:
          state.reader = continuation
          guard self.flowControlled, !state.demandOutstanding else { return .wait }
          state.demandOutstanding = true
          return .ask(state.call)
        }
      }
      switch step {
      case .resume(let result): continuation.resume(with: result)
      case .ask(let call): call?.receiveNextMessages(1)
      case .wait: break
      }
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
    let reader: CheckedContinuation<(any Sendable)?, any Error>? = self.state.withLock { state in
      state.demandOutstanding = false
      guard let reader = state.reader else {
        state.messages.append(data)
        return nil
      }
      state.reader = nil
      return reader
    }
    reader?.resume(returning: data)
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
    let (reader, writers, call) = self.state.withLock { state in
      state.closed = error.map { .failure($0) } ?? .success(trailingMetadata ?? [:])
      defer {
        state.reader = nil
        state.writers = []
        state.call = nil
      }
      return (state.reader, state.writers, state.call)
    }
    defer { withExtendedLifetime(call) {} }
    if let error {
      reader?.resume(throwing: error)
      for writer in writers { writer.resume(throwing: error) }
    } else {
      // A reader waiting at a clean close gets the end of the stream; writes not acknowledged
      // by then were not needed by the server.
      reader?.resume(returning: nil)
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
