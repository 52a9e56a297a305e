internal import Foundation
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix

/// One RPC on a transport stream directly (the raw path): writes the requests, reads the
/// responses up the runner's chain (``ResponsePartReader``, as on the `GRPCClient` path), and
/// reports how the RPC ended.
///
/// Requests that were all known when the stream opened are written with the end of the stream
/// in one go; otherwise a child task writes them as they come while this task reads.
struct RawExchange: TransportStreamBody {
  let runner: GRPCCall2Internal
  let attempt: RPCAttempt

  static func run(runner: GRPCCall2Internal, _ attempt: RPCAttempt) async throws -> RPCOutcome {
    let exchange = RawExchange(runner: runner, attempt: attempt)
    if let transport = attempt.channel.posixTransport {
      // The built-in transport's own stream type: the exchange is specialized for it.
      return try await transport.withStream(
        descriptor: attempt.descriptor,
        options: attempt.options
      ) { stream, _ in
        try await exchange.run(on: stream)
      }
    }
    return try await attempt.channel.withTransportStream(
      descriptor: attempt.descriptor,
      options: attempt.options,
      body: exchange
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
      return await self.read(stream, handsOver: self.attempt.channel.failsResponsesWithWriter)
    }
    return await withTaskGroup(of: Void.self) { group in
      group.addTask {
        await self.writeRequests(to: stream.outbound)
      }
      let outcome = await self.read(stream, handsOver: false)
      // The RPC is over: a writer still waiting for requests has nothing left to do, and one
      // waiting for the transport to take a request may wait for good (a stream refused while
      // it waited for a slot never becomes writable): cancelling it ends the stream.
      self.runner.endRequests()
      group.cancelAll()
      return outcome
    }
  }

  /// Writes each request as the application sends it, then half-closes.
  private func writeRequests<Bytes: GRPCContiguousBytes>(
    to outbound: RPCWriter<RPCRequestPart<Bytes>>.Closable
  ) async {
    do {
      try await outbound.write(.metadata(self.attempt.metadata))
      try await self.runner.writeStreamedRequests(coder: self.attempt.coder) { bytes in
        try await outbound.write(.message(Bytes(bytes)))
      }
      await outbound.finish()
    } catch {
      // The transport resets the stream (RST_STREAM CANCEL) for a writer that finishes with an
      // error; the stream's end then finds the writer finished, so no END_STREAM follows.
      await outbound.finish(throwing: error)
    }
  }

  /// Reads the responses.
  ///
  /// - Parameter handsOver: Whether a flooding stream may be handed to the task that consumes
  ///   its responses (``ResponsePull``): only when every request has left, so that no request
  ///   writer waits on a close that only the reader would see, and only on a transport where a
  ///   cancel can end a read waiting in another task.
  private func read<Bytes: GRPCContiguousBytes>(
    _ stream: RPCStream<
      RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>,
      RPCWriter<RPCRequestPart<Bytes>>.Closable
    >,
    handsOver: Bool
  ) async -> RPCOutcome {
    var reader = ResponsePartReader(
      runner: self.runner,
      coder: self.attempt.coder,
      responseSizeLimit: self.attempt.responseSizeLimit
    )
    reader.closesOnSuccess = true
    if handsOver {
      let outbound = stream.outbound
      reader.stopStream = {
        // The transport fails the stream's responses with the error, so a read waiting on them
        // returns; the stream is reset when the exchange returns.
        Task { await outbound.finish(throwing: CancellationError()) }
      }
    }
    return await reader.read(TransportResponseParts(stream.inbound))
  }
}
