internal import Foundation
internal import GRPCCore

// The attempts of an RPC: the two paths to the core, and gRFC A6 transparent retry.
extension GRPCCall2Internal {
  /// Runs `attempt` on the raw path or through `GRPCClient`, again when it failed before its
  /// stream opened.
  ///
  /// gRFC A6 transparent retry: an RPC that failed before its stream opened (its connection
  /// went away, or none was ready) sent no byte to the server, and one the server refused
  /// (REFUSED_STREAM) was not processed, so it is tried once more, whatever its retry policy;
  /// each kind has a retry of its own, as in A6 (a graceful shutdown's refusal often follows a
  /// try that found no connection ready). A call that waits for ready tries until a connection
  /// takes it (the transport gives up on a channel whose connection is being replaced after a
  /// few immediate tries), backing off, until its deadline or cancellation.
  func run(_ attempt: RPCAttempt, raw: Bool, waitForReady: Bool) async throws -> RPCOutcome {
    var pacing = RetryPacing()
    // A stream asked of a connection that was closing (a GOAWAY, a reset), or of a channel
    // between two connections, is tried again, backing off, as gRPC core queues a call while
    // its channel connects: the channel either gets a new connection (usually within
    // milliseconds; seconds on a busy machine) or fails to, and then says so in other words,
    // which end the call. The count (about 15 s of tries) only guards against a channel that
    // stays between connections for good.
    var racedConnectionRetries = 20
    var neverLeftRetryLeft = true
    var unprocessedRetryLeft = true
    while true {
      do {
        let outcome =
          raw
          ? try await RawExchange.run(runner: self, attempt) : try await self.runOnClient(attempt)
        guard self.neverReachedServer(outcome) else { return outcome }
        if Self.neverLeftClient(outcome), racedConnectionRetries > 0 {
          // Its stream was held back from a closing connection: as if the stream had been asked
          // of it (gRFC A6 retries an RPC that never left the client without limit).
          racedConnectionRetries -= 1
        } else if unprocessedRetryLeft || waitForReady {
          // An RPC the server never took is tried again once, as if it had never left.
          unprocessedRetryLeft = false
        } else {
          return outcome
        }
        // Streamed requests are sent again if the attempt kept them all.
        guard attempt.known != nil || self.state.withLock({ $0.rewind() }) else {
          return outcome
        }
        try await self.beforeRetry(&pacing)
      } catch
        where (neverLeftRetryLeft || waitForReady || racedConnectionRetries > 0)
        && self.neverLeft(error)
      {
        if !neverLeftRetryLeft && !waitForReady {
          // Only a connection that was closing under the stream earns more tries.
          guard Self.racedClosingConnection(error) else { throw error }
          racedConnectionRetries -= 1
        }
        neverLeftRetryLeft = false
        try await self.beforeRetry(&pacing)
      }
    }
  }

  /// Waits as `pacing` says before the next attempt, whose stream has not opened yet: whether
  /// the last one's did says nothing about it (a stream refused after it opened is followed by
  /// an attempt that may fail before its own opens).
  private func beforeRetry(_ pacing: inout RetryPacing) async throws {
    self.state.withLock { $0.attemptBegins() }
    try await pacing.beforeRetry()
  }

  /// When a failed attempt is tried again: the first retry at once, every later one after a
  /// pause that doubles from 10 ms up to 1 s.
  private struct RetryPacing {
    private var retried = false
    private var pause = Duration.milliseconds(10)

    mutating func beforeRetry() async throws {
      if self.retried {
        try await Task.sleep(for: self.pause)
        self.pause = min(self.pause * 2, .seconds(1))
      }
      self.retried = true
    }
  }

  /// Whether `error` says the stream was asked of a connection that was closing, or of a
  /// channel between two connections (its load balancer had no ready subchannel: the moment
  /// after a GOAWAY), rather than that the channel has failed to connect (which fails a call
  /// fast unless it waits for ready). The transport tries 5 times without a pause, so a call
  /// made in that moment fails unless it is tried again a little later.
  private static func racedClosingConnection(_ error: any Error) -> Bool {
    if case .connectionNotReady? = CoreFailure(error) { return true }
    return false
  }

  /// Whether `outcome` is a stream that never left the client (``StreamEndInterpreter``).
  private static func neverLeftClient(_ outcome: RPCOutcome) -> Bool {
    outcome.error?.message == StreamEndInterpreter.neverLeftMessage
  }

  /// The `GRPCClient` path: the executor runs retries and hedging.
  ///
  /// The executor runs the request producer in a task of its own, and ends the transport's
  /// stream as soon as the response handler returns: with the request writer still open, that
  /// end is a half-close (END_STREAM) which the producer's reset, a moment later, no longer
  /// undoes. So a cancelled call's response handler returns only once the producer has ended,
  /// with the reset; and the attempt runs on the channel's event loop, whatever the channel's
  /// load, so that the producer's reset (which reaches the transport without a suspension once
  /// the producer ends) is on the loop before the handler, woken by that end, can run.
  private func runOnClient(_ attempt: RPCAttempt) async throws -> RPCOutcome {
    guard let executor = attempt.loopExecutor else {
      return try await self.runOnClientHere(attempt)
    }
    return try await withTaskExecutorPreference(executor) {
      try await self.runOnClientHere(attempt)
    }
  }

  private func runOnClientHere(_ attempt: RPCAttempt) async throws -> RPCOutcome {
    // The retry executor leaves work running when a stream fails (``TransportStreamFailure``).
    // Bound for every call, so that a call started from another's task never inherits it.
    let handler: (@Sendable () -> Void)? =
      attempt.options.executionPolicy?.retry == nil ? nil : { @Sendable in self.cancelTaskOnly() }
    return try await TransportStreamFailure.$handler.withValue(handler) {
      try await self.executeOnClient(attempt)
    }
  }

  private func executeOnClient(_ attempt: RPCAttempt) async throws -> RPCOutcome {
    let producer = ProducerRun()
    return try await attempt.channel.rawStreaming(
      request: StreamingClientRequest(metadata: attempt.metadata) { writer in
        producer.started()
        defer { producer.ended() }
        self.markStreamOpened()
        if let known = attempt.known {
          try await writer.write(
            contentsOf: try known.map { try self.serialize($0, coder: attempt.coder) }
          )
          self.acknowledgeKnownWrites(known.count)
        } else {
          try await self.writeStreamedRequests(coder: attempt.coder) { bytes in
            try await writer.write(bytes)
          }
        }
      },
      descriptor: attempt.descriptor,
      options: attempt.options
    ) { response in
      self.markStreamOpened()
      let outcome = await ResponsePartReader(
        runner: self,
        coder: attempt.coder,
        responseSizeLimit: attempt.responseSizeLimit,
        movesFloodingStreams: false
      )
      .read(ClientResponseParts(response))
      if self.cancelReason != nil || Task.isCancelled {
        // The producer was cancelled with this task (or is woken here): it ends at once. One
        // that never started (the deadline passed first) is not waited for.
        self.endRequests()
        await producer.waitIfStarted()
      }
      return outcome
    }
  }

  /// Whether `error` ended an attempt whose stream never opened, so that no byte of the RPC
  /// reached the server, for a reason a new attempt may not meet (UNAVAILABLE).
  private func neverLeft(_ error: any Error) -> Bool {
    let opened = self.state.withLock { $0.streamOpened }
    guard !opened, self.cancelReason == nil, !Task.isCancelled else { return false }
    let code = (error as? RPCError)?.code ?? (error as? GRPCError)?.code
    return code == .unavailable
  }

  /// Whether `outcome` is an RPC that never reached the server's application, before anything
  /// went up the chain: a stream the server refused (REFUSED_STREAM: it did no work on it; what
  /// a server shutting down gracefully answers to streams past its last one), one that never
  /// left the client, or a connection that was closing when the stream was asked of it
  /// ("subchannel isn't ready").
  private func neverReachedServer(_ outcome: RPCOutcome) -> Bool {
    guard let error = outcome.error else { return false }
    let unsent =
      StreamReset.isRefused(error) || Self.neverLeftClient(outcome)
      || error.message.hasPrefix(StreamEndInterpreter.unprocessedPrefix)
      || [CoreFailure(error), error.cause.flatMap(CoreFailure.init)].contains(
        .connectionNotReady(.closing)
      )
    guard unsent else { return false }
    return self.state.withLock { !$0.delivered } && self.cancelReason == nil && !Task.isCancelled
  }
}
