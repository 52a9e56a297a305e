internal import Foundation
internal import GRPCCore

/// Reads an attempt's response parts up the runner's chain and says how the RPC ended, on
/// either path to the core: headers, then each message, then the status.
///
/// It does what the core's executor does with a response, and nothing more: the first part
/// decides between headers and a trailers-only answer; a second set of headers, or a message
/// before them, is a protocol error; a non-OK status becomes the error. It never throws: a
/// failure after the headers becomes a ``GRPCError`` carrying them, so the error a failed call
/// closes with holds what the handler was given.
struct ResponsePartReader {
  let runner: GRPCCall2Internal
  /// Deserializes each message before it travels up; a failure ends the call.
  let coder: MessageCoder
  let responseSizeLimit: Int
  /// Whether a stream that floods the client is read on the responses' delivery queue from its
  /// third message on (see ``read(_:)``). The `GRPCClient` path reads where it started: its
  /// executor ends the stream as soon as the response handler returns, and a cancelled call's
  /// handler must return on the channel's event loop, after the request producer's reset.
  var movesFloodingStreams = true
  /// Whether a successful status closes the call as soon as it is read, before the exchange
  /// lets go of its stream: the handler's close then does not wait for the stream's teardown,
  /// and a call the application makes from it starts meanwhile. Only where nothing can follow
  /// the status: a failure may still be retried, and the `GRPCClient` path's executor decides
  /// the RPC's end itself.
  var closesOnSuccess = false
  /// Makes the stream fail under a read that waits on the transport, so that a flooding stream
  /// may be handed to the task that consumes its responses (``ResponsePull``); `nil`: never.
  var stopStream: (@Sendable () -> Void)?

  /// Reads `source` to its status.
  ///
  /// The call's task may run on its channel's event loop (``EventLoopTaskExecutor``): then no
  /// thread hop separates the transport from the call. That suits a short exchange, and an
  /// interactive stream, where each response waits for the application to answer it. A stream
  /// that floods the client is better read off the loop, which moves its per-message work off
  /// the loop's core and lets a reader that waits for demand be woken without waking the loop
  /// (the Benchmarks article has the figures). So from the third message on, the reading moves
  /// once the stream floods the client: its request side has ended (a server stream, or a
  /// stream the application finished), its responses outnumber its requests by more than two
  /// to one, or a message had to wait for demand. It moves to the queue the responses are
  /// delivered on (``DeliveryQueueExecutor``), or to the shared pool when they are delivered
  /// inline or on the main queue. A handler that reads responses in a task of its own (the
  /// async faces, ``ResponsePulling``) is handed the stream instead when the exchange allows it
  /// (``stopStream``: a server stream on grpc-swift-nio-transport's HTTP/2 transport) and no
  /// interceptor stands between the handler and the transport: the consumer's task then reads
  /// it (``ResponsePull``).
  func read<Source: ResponsePartSource>(_ source: Source) async -> RPCOutcome {
    var parts = source
    var headers: Metadata?
    do {
      if let outcome = try await self.readParts(
        &parts,
        headers: &headers,
        place: self.movesFloodingStreams ? .firstResponses : .started
      ) {
        return outcome
      }
      if let stopStream {
        let stream = PulledStream(parts: parts, headers: headers)
        let pull = ResponsePull(read: { await self.readNextMessage(of: stream) }, stop: stopStream)
        if self.runner.previous.offer(pull) {
          if let outcome = await pull.waitForEnd() {
            return outcome
          }
          // Taken back from the consumer: the call was cancelled.
          (parts, headers) = (stream.parts, stream.headers)
        }
      }
      // Never the main queue: an application's main thread is not where a stream is parsed. (A
      // queue of the application's that targets the main queue cannot be told apart.)
      let queue = self.runner.previous.deliveryQueue.flatMap {
        $0 === DispatchQueue.main ? nil : $0
      }
      let executor: any TaskExecutor =
        queue.map { DeliveryQueueExecutor(queue: $0) } ?? globalConcurrentExecutor
      if let outcome = try await withTaskExecutorPreference(
        executor,
        operation: {
          try await self.readParts(
            &parts,
            headers: &headers,
            place: queue == nil ? .pool : .deliveryQueue
          )
        }
      ) {
        return outcome
      }
      throw RPCError(code: .internalError, message: "The stream ended without a status.")
    } catch {
      // Ended on this side (or by the transport): no trailers came.
      return self.failure(error, headers: headers ?? [:], trailers: nil)
    }
  }

  /// A stream's parts, read by the task that consumes its responses (``ResponsePull``).
  private final class PulledStream<Source: ResponsePartSource> {
    var parts: Source
    var headers: Metadata?

    init(parts: Source, headers: Metadata?) {
      self.parts = parts
      self.headers = headers
    }
  }

  /// Reads `stream` until the next message or the end of the stream.
  private func readNextMessage(
    of stream: PulledStream<some ResponsePartSource>
  ) async -> ResponsePull.Read {
    do {
      while let part = try await stream.parts.next() {
        switch try await self.handle(
          part,
          headers: &stream.headers,
          place: .consumer,
          flowControlled: false
        ) {
        case .headers: continue
        case .message: return .delivered
        case .pulled(let message): return .message(message)
        case .ended(let outcome): return .ended(outcome)
        }
      }
      throw Self.endedWithoutStatus
    } catch {
      return .ended(self.failure(error, headers: stream.headers ?? [:], trailers: nil))
    }
  }

  /// Where ``readParts(_:headers:place:)`` runs.
  private enum ReadingPlace {
    /// Where the call's task started (its channel's event loop, usually): it stops (returning
    /// `nil`) when the stream turns out to flood the client (see `read(_:)`).
    case firstResponses
    /// Where the call's task started, for the whole stream.
    case started
    /// The shared pool.
    case pool
    /// The queue the responses are delivered on.
    case deliveryQueue
    /// The task that consumes the responses (``ResponsePull``).
    case consumer
  }

  /// What a part did.
  private enum Handled {
    case headers
    /// A message went up (or, read by the consumer's task, was dropped as the call closes);
    /// `waitedForDemand`: it had to wait for the application to ask.
    case message(waitedForDemand: Bool)
    /// A message the task that consumes the responses takes itself (``ResponsePull``).
    case pulled(any Sendable)
    case ended(RPCOutcome)
  }

  /// Reads response parts until the status, which gives the outcome.
  private func readParts(
    _ parts: inout some ResponsePartSource,
    headers: inout Metadata?,
    place: ReadingPlace
  ) async throws -> RPCOutcome? {
    let flowControlled = self.runner.isFlowControlled
    var delivered = 0
    var waitedForDemand = false
    while let part = try await parts.next() {
      switch try await self.handle(
        part,
        headers: &headers,
        place: place,
        flowControlled: flowControlled
      ) {
      case .headers, .pulled:
        break
      case .message(let waited):
        waitedForDemand = waitedForDemand || waited
        delivered += 1
        if place == .firstResponses, delivered >= 2,
          waitedForDemand || self.runner.floodsClient(delivered: delivered)
        {
          return nil
        }
      case .ended(let outcome):
        if self.closesOnSuccess, outcome.error == nil {
          self.runner.close(trailers: outcome.trailers, error: nil)
        }
        return outcome
      }
    }
    throw Self.endedWithoutStatus
  }

  /// Sends `part` up the chain.
  private func handle(
    _ part: ResponsePart,
    headers: inout Metadata?,
    place: ReadingPlace,
    flowControlled: Bool
  ) async throws -> Handled {
    switch part {
    case .headers(let metadata):
      guard headers == nil else {
        throw RPCError(code: .internalError, message: "The server sent a second set of headers.")
      }
      headers = metadata
      self.runner.deliver(initialMetadata: metadata)
      return .headers

    case .message(let data):
      guard headers != nil else {
        throw RPCError(
          code: .internalError,
          message: "The server sent a message before its headers."
        )
      }
      if place == .consumer {
        // The consumer reads when it wants a message: its read is its demand.
        let message = try self.coder.deserialize(data)
        return self.runner.previous.receivePulled(message)
          ? .pulled(message) : .message(waitedForDemand: false)
      }
      // With flow control, each message waits for a unit of demand; the next part is read
      // only after that, so at most one message waits in this layer.
      var waited = false
      if flowControlled {
        switch await self.runner.takeDemand() {
        case .available: break
        case .waited: waited = true
        case .cancelled: throw CancellationError()
        }
      }
      // Returning early (a parse failure) ends the RPC, which cancels it on the server.
      self.runner.deliver(
        message: try self.coder.deserialize(data),
        withinDeliveryQueue: place == .deliveryQueue
      )
      return .message(waitedForDemand: waited)

    case .status(let status, let trailers):
      if headers == nil {
        // Trailers-only: the server answered with a status and no headers.
        guard status.code != .ok else {
          self.runner.deliver(initialMetadata: [:])
          return .ended(RPCOutcome(trailers: trailers, error: nil))
        }
      }
      guard let error = RPCError(status: status, metadata: trailers) else {
        return .ended(RPCOutcome(trailers: trailers, error: nil))
      }
      // The transport also reports some of its own failures (an oversize message) as a
      // status: those came with no trailers from the server.
      return .ended(
        self.failure(
          error,
          headers: headers ?? [:],
          trailers: GRPCError.isLocal(error) ? nil : trailers
        )
      )
    }
  }

  /// What a stream that ended without a status throws: a cancellation when its task was
  /// cancelled (the transport ends the stream then), otherwise a protocol error.
  private static var endedWithoutStatus: any Error {
    if Task.isCancelled {
      return CancellationError()
    }
    return RPCError(code: .internalError, message: "The stream ended without a status.")
  }

  /// - Parameter trailers: The server's trailers, when its status ended the call.
  private func failure(_ error: any Error, headers: Metadata, trailers: Metadata?) -> RPCOutcome {
    let converted = self.runner.convert(error, headers: headers, limit: self.responseSizeLimit)
    return RPCOutcome(trailers: trailers, error: converted)
  }
}
