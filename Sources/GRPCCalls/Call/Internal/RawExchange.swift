internal import Foundation
internal import GRPCCore

/// One RPC on a transport stream directly (the raw path): writes the requests, reads the
/// responses up the runner's chain, and reports how the RPC ended.
///
/// It does what the core's executor does for a call without retries, and nothing more: the
/// first response part decides between headers and a trailers-only answer; a second set of
/// headers, or a message before them, is a protocol error; a non-OK status becomes the error.
/// Requests that were all known when the stream opened are written with the end of the stream
/// in one go; otherwise a child task writes them as they come while this task reads.
struct RawExchange: TransportStreamBody {
  let runner: GRPCCall2Internal
  let attempt: RPCAttempt

  static func run(runner: GRPCCall2Internal, _ attempt: RPCAttempt) async throws -> RPCOutcome {
    try await attempt.channel.withTransportStream(
      descriptor: attempt.descriptor,
      options: attempt.options,
      body: RawExchange(runner: runner, attempt: attempt)
    )
  }

  func run<Bytes: GRPCContiguousBytes>(
    on stream: RPCStream<
      RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>,
      RPCWriter<RPCRequestPart<Bytes>>.Closable
    >
  ) async throws -> RPCOutcome {
    self.runner.markStreamOpened()
    if let known = self.attempt.known {
      var parts: [RPCRequestPart<Bytes>] = [.metadata(self.attempt.metadata)]
      parts.reserveCapacity(known.count + 1)
      for message in known {
        // A request that does not serialize closes the call with that error.
        parts.append(.message(Bytes(try self.runner.serialize(message, coder: self.attempt.coder))))
      }
      do {
        try await stream.outbound.write(contentsOf: parts)
        await stream.outbound.finish()
        self.runner.acknowledgeKnownWrites(known.count)
      } catch {
        // The stream failed under the write (its connection closed): the response side says
        // how the RPC ended, as on the core's own path.
        await stream.outbound.finish(throwing: error)
      }
      return await self.read(stream.inbound)
    }
    return await withTaskGroup(of: Void.self) { group in
      group.addTask {
        await self.writeRequests(to: stream.outbound)
      }
      let outcome = await self.read(stream.inbound)
      // The RPC is over: a writer still waiting for requests has nothing left to do.
      self.runner.endRequests()
      return outcome
    }
  }

  /// Writes each request as the application sends it, then half-closes.
  private func writeRequests<Bytes: GRPCContiguousBytes>(
    to outbound: RPCWriter<RPCRequestPart<Bytes>>.Closable
  ) async {
    do {
      try await outbound.write(.metadata(self.attempt.metadata))
      while let message = try await self.runner.nextRequest() {
        let bytes = Bytes(try self.runner.serializeStreamed(message, coder: self.attempt.coder))
        // The writer returns once the transport accepted the message: that is what
        // didWriteData reports under flow control.
        try await outbound.write(.message(bytes))
        self.runner.acknowledgeStreamedWrite()
      }
      await outbound.finish()
    } catch {
      // The transport resets the stream (RST_STREAM CANCEL) for a writer that finishes with an
      // error; the stream's end then finds the writer finished, so no END_STREAM follows.
      await outbound.finish(throwing: error)
    }
  }

  /// Reads the responses up the chain; never throws.
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
  /// inline or on the main queue.
  private func read<Bytes: GRPCContiguousBytes>(
    _ inbound: RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>
  ) async -> RPCOutcome {
    var headers: Metadata?
    var parts = inbound.makeAsyncIterator()
    do {
      if let outcome = try await self.readParts(&parts, headers: &headers, place: .firstResponses) {
        return outcome
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

  /// Where ``readParts(_:headers:place:)`` runs.
  private enum ReadingPlace {
    /// Where the call's task started (its channel's event loop, usually): it stops (returning
    /// `nil`) when the stream turns out to flood the client (see `read(_:)`).
    case firstResponses
    /// The shared pool.
    case pool
    /// The queue the responses are delivered on.
    case deliveryQueue
  }

  /// Reads response parts until the status, which gives the outcome.
  ///
  private func readParts<Bytes: GRPCContiguousBytes>(
    _ parts: inout RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>.AsyncIterator,
    headers: inout Metadata?,
    place: ReadingPlace
  ) async throws -> RPCOutcome? {
    let flowControlled = self.runner.isFlowControlled
    var delivered = 0
    var waitedForDemand = false
    while let part = try await parts.next() {
      switch part {
      case .metadata(let metadata):
        guard headers == nil else {
          throw RPCError(code: .internalError, message: "The server sent a second set of headers.")
        }
        headers = metadata
        self.runner.deliver(initialMetadata: metadata)

      case .message(let bytes):
        guard headers != nil else {
          throw RPCError(
            code: .internalError,
            message: "The server sent a message before its headers."
          )
        }
        if flowControlled {
          switch await self.runner.takeDemand() {
          case .available: break
          case .waited: waitedForDemand = true
          case .cancelled: throw CancellationError()
          }
        }
        let data = bytes.withUnsafeBytes { Data($0) }
        // Returning early (a parse failure) ends the RPC, which cancels it on the server.
        self.runner.deliver(
          message: try self.attempt.coder.deserialize(data),
          withinDeliveryQueue: place == .deliveryQueue
        )
        delivered += 1
        if place == .firstResponses, delivered >= 2,
          waitedForDemand || self.runner.floodsClient(delivered: delivered)
        {
          return nil
        }

      case .status(let status, let trailers):
        if headers == nil {
          // Trailers-only: the server answered with a status and no headers.
          guard status.code != .ok else {
            self.runner.deliver(initialMetadata: [:])
            return RPCOutcome(trailers: trailers, error: nil)
          }
        }
        guard let error = RPCError(status: status, metadata: trailers) else {
          return RPCOutcome(trailers: trailers, error: nil)
        }
        // The transport also reports some of its own failures (an oversize message) as a
        // status: those came with no trailers from the server.
        return self.failure(
          error,
          headers: headers ?? [:],
          trailers: GRPCError.isLocal(error) ? nil : trailers
        )
      }
    }
    // The stream ended without a status.
    if Task.isCancelled {
      throw CancellationError()
    }
    throw RPCError(code: .internalError, message: "The stream ended without a status.")
  }

  /// - Parameter trailers: The server's trailers, when its status ended the call.
  private func failure(_ error: any Error, headers: Metadata, trailers: Metadata?) -> RPCOutcome {
    let converted = self.runner.convert(
      error,
      headers: headers,
      limit: self.attempt.responseSizeLimit
    )
    return RPCOutcome(trailers: trailers, error: converted)
  }
}
