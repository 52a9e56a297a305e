internal import Dispatch
internal import Foundation
internal import GRPCCallsInput
internal import GRPCCore

/// The bottom of a call's chain: turns the call's options into the core's and runs the RPC.
///
/// It starts with the options the last interceptor passed on (the call's own when there are
/// none), except the transport, which was fixed when the call was made. Two paths lead to the
/// core (Design article, "The path of a call"): a call with a retry or hedging policy runs
/// through `GRPCClient`, whose executor owns them; every other call runs on the transport's
/// stream directly (the raw path, ``RawExchange``), which costs no executor, task group or
/// deadline task. Both read responses through ``ResponsePartReader``, write streamed requests
/// through ``writeStreamedRequests(coder:through:)`` and map deadlines, cancellation, size
/// limits and errors here; what differs is how the stream is acquired, ended and retried, and
/// the errors the `GRPCClient` executor throws itself. `GRPCCall2Internal+Attempts` runs them
/// and retries an RPC that never left.
///
/// When the request side has half-closed by the time the stream opens (a unary or
/// server-streaming call, or any call whose `finish()` came with its start), every request
/// leaves with END_STREAM in one flush: the method is described to the transport as having a
/// unary request, so it holds the headers and message until the half-close. A peer that answers
/// before our END_STREAM resets the stream, and enough resets make swift-nio-http2 close the
/// whole connection (Design article, "Where the core needed help").
///
/// Its state lives in one machine (``StateMachine``); the close travels up exactly once. What
/// the RPC asks of it while it runs (requests, demand, delivering responses) is in
/// `GRPCCall2Internal+Exchange`.
final class GRPCCall2Internal: Sendable {
  private let pool: GRPCChannelPool
  private let transportType: GRPCTransportType
  private let transport: GRPCTransportID?
  /// Where responses go; the extensions that read the RPC's responses use it too.
  let previous: any ResponseLink
  /// The call's whole state; touched only by this type and its extensions in
  /// `GRPCCall2Internal+*`.
  let state = LockedValue(StateMachine())

  /// - Parameters:
  ///   - pool: Where the channel comes from.
  ///   - transportType: The transport type, as the call was made with.
  ///   - transport: The registered transport, as the call was made with.
  ///   - previous: Where responses go: the last interceptor, or the call.
  init(
    pool: GRPCChannelPool,
    transportType: GRPCTransportType,
    transport: GRPCTransportID?,
    previous: any ResponseLink
  ) {
    self.pool = pool
    self.transportType = transportType
    self.transport = transport
    self.previous = previous
  }

  /// Closes the call towards the application, once.
  func close(trailers: Metadata?, error: GRPCError?) {
    let (first, lease, writer, reader) = self.state.withLock { machine in
      let (first, lease) = machine.close()
      let (writer, reader) = machine.endRequests()
      return (first, lease, writer, reader)
    }
    writer?.resume()
    reader?.resume(returning: false)
    // Before the close goes up: a call made from the handler's close finds the connection free.
    lease?.release()
    if first {
      self.previous.close(trailers: trailers, error: error)
    }
  }

  /// The attempt's stream opened: requests may leave from now on.
  func markStreamOpened() {
    self.state.withLock { $0.streamDidOpen() }
  }

  /// Why the RPC's task was cancelled from this side, if it was.
  var cancelReason: StateMachine.CancelReason? {
    self.state.withLock { $0.cancelReason }
  }

  /// Runs the RPC; `key` is the channel key of `callOptions`, derived when the call started.
  private func run(
    requestOptions: GRPCRequestOptions,
    callOptions: GRPCCallOptions,
    key: Result<ChannelKey, GRPCError>
  ) async {
    var limit = callOptions.effectiveResponseSizeLimit
    var timer: DispatchWorkItem?
    defer { timer?.cancel() }
    let outcome: RPCOutcome
    do {
      let key = try key.get()
      limit = key.responseSizeLimit
      var descriptor = try MethodPath.descriptor(for: requestOptions.path)
      var metadata = try await RequestMetadata.make(for: callOptions, userAgent: key.userAgent)
      let lease = try self.pool.lease(for: key, options: callOptions)
      // Released by the close, which this run makes at its end if nothing made it earlier.
      self.state.withLock { $0.holdLease(lease) }
      let plan = try CallPlan(
        callOptions,
        safety: requestOptions.safety,
        key: key,
        method: lease.client.config(forMethod: descriptor)
      )
      limit = plan.responseSizeLimit
      let known = self.state.withLock { $0.takeAllRequestsIfFinished() }
      if known != nil {
        // Every request is known: the transport holds them until the half-close, then sends
        // headers, messages and END_STREAM together.
        descriptor.type = .unary
      }
      let raw = plan.executionPolicy == nil && !self.pool.config.sendsEveryCallThroughClient
      if plan.timeout > 0 {
        if raw {
          // The raw path runs no executor: the deadline's header is ours to send.
          metadata.replaceOrAddString(
            GRPCTimeout.header(seconds: plan.timeout),
            forKey: "grpc-timeout"
          )
        }
        // Ours on both paths, since attempts that wait for a connection below span executor
        // calls.
        timer = self.armDeadline(after: plan.timeout)
      }
      var coder = MessageCoder(marshaller: callOptions.marshaller)
      coder.requestSizeLimit = plan.requestSizeLimit
      let attempt = RPCAttempt(
        channel: lease.client,
        descriptor: descriptor,
        options: plan.coreOptions(compression: key.compression),
        metadata: metadata,
        known: known,
        coder: coder,
        responseSizeLimit: limit,
        loopExecutor: lease.executor
      )
      outcome = try await self.run(attempt, raw: raw, waitForReady: plan.waitForReady)
    } catch {
      // A server's status is read from the response; what is thrown here ended the call on this
      // side (the options, the token, the host, the deadline, an unreachable server, a request
      // that did not serialize), so no trailers came.
      outcome = RPCOutcome(
        trailers: nil,
        error: self.convert(error, headers: [:], limit: limit, options: callOptions)
      )
    }
    var finalOutcome = outcome
    if let error = outcome.error, let reason = self.cancelReason {
      // The RPC ended because this side cancelled it: say why, keeping what the peer had sent.
      finalOutcome = RPCOutcome(
        trailers: nil,
        error: Self.cancelled(reason, headers: error.headers)
      )
    } else if let error = outcome.error {
      finalOutcome.error = OversizeMetadata.explain(error, metadata: callOptions.initialMetadata)
    }
    self.close(trailers: finalOutcome.trailers, error: finalOutcome.error)
  }

  // MARK: Errors and deadlines

  func convert(
    _ error: any Error,
    headers: Metadata,
    limit: Int,
    options: GRPCCallOptions? = nil
  ) -> GRPCError {
    var converted = GRPCError(converting: error, headers: headers, responseSizeLimit: limit)
    if converted.code == .unavailable, let options, options.transport == nil,
      !options.transportType.isSecure,
      CoreFailure(message: converted.message) == .closedBeforePreface
    {
      // What a TLS server does to a plaintext client; the core's message does not say so.
      converted.message +=
        " A server that expects TLS does this to a plaintext client: check transportType."
    }
    return converted
  }

  private static func cancelled(_ reason: StateMachine.CancelReason, headers: Metadata) -> GRPCError
  {
    switch reason {
    case .app:
      return GRPCError(code: .cancelled, message: "The call was cancelled", headers: headers)
    case .deadline:
      return GRPCError(
        code: .deadlineExceeded,
        message: "RPC timed out before completing",
        headers: headers
      )
    }
  }

  /// Cancels the RPC with DEADLINE_EXCEEDED after `seconds`, unless it ends first.
  private func armDeadline(after seconds: TimeInterval) -> DispatchWorkItem {
    let item = DispatchWorkItem { [weak self] in
      self?.cancelRPC(.deadline)
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: item)
    return item
  }

  /// Cancels the RPC's task without a reason of this side's, so the RPC ends with the error it
  /// has: work the core left running in the task (``TransportStreamFailure``) ends with it.
  func cancelTaskOnly() {
    self.state.withLock { $0.runningTask }?.cancel()
  }

  private func cancelRPC(_ reason: StateMachine.CancelReason) {
    let actions = self.state.withLock { $0.cancel(reason) }
    actions.writer?.resume()
    actions.reader?.resume(returning: false)
    // The RPC ends with a cancellation and closes from its task, saying why.
    actions.task?.cancel()
    if actions.closeNow {
      self.close(
        trailers: nil,
        error: GRPCError(code: .cancelled, message: "The call was cancelled")
      )
    }
  }
}

extension GRPCCall2Internal: RequestLink {
  func start(
    requestOptions: GRPCRequestOptions,
    callOptions: GRPCCallOptions,
    writes: [any Sendable],
    finish: Bool
  ) {
    let callOptions = self.onCallTransport(callOptions)
    let key = Result { () throws(GRPCError) in
      try self.pool.key(host: requestOptions.host, options: callOptions)
    }
    let executor = (try? key.get()).flatMap { self.pool.executor(for: $0) }
    self.state.withLock { machine in
      guard
        machine.start(writes: writes, finish: finish, flowControl: callOptions.enableFlowControl)
      else { return }
      // The task holds `self`, so the call runs to its close even if the caller lets go of it.
      // Made under the lock, so the RPC cannot end before the machine holds its task.
      let run: @Sendable () async -> Void = {
        await self.run(requestOptions: requestOptions, callOptions: callOptions, key: key)
      }
      machine.running(in: Self.task(on: executor, run))
    }
  }

  /// A task for `operation`, preferring `executor` if there is one.
  ///
  /// Without an executor it is a plain task: `Task(executorPreference: nil)` still records a
  /// preference, which the runtime then looks up under the task's status lock at every job
  /// switch.
  private static func task(
    on executor: EventLoopTaskExecutor?,
    _ operation: @escaping @Sendable () async -> Void
  ) -> Task<Void, Never> {
    guard let executor else {
      return Task(operation: operation)
    }
    return Task(executorPreference: executor, operation: operation)
  }

  /// `options` on the transport the call was made with, which an interceptor cannot change.
  private func onCallTransport(_ options: GRPCCallOptions) -> GRPCCallOptions {
    var options = options
    // Set only when an interceptor changed them: writing a channel-level option gives the copy
    // settings of its own, which no longer share the cached channel key by identity.
    if options.transportType != self.transportType {
      options.transportType = self.transportType
    }
    if options.transport != self.transport {
      options.transport = self.transport
    }
    return options
  }

  func write(_ message: any Sendable) {
    self.state.withLock { $0.write(message) }?.resume()
  }

  func finish() {
    self.state.withLock { $0.finish() }?.resume()
  }

  func cancel() {
    self.cancelRPC(.app)
  }

  func receiveNextMessages(_ count: Int) {
    self.state.withLock { $0.addDemand(count) }?.resume(returning: true)
  }
}
