internal import Dispatch
internal import Foundation
internal import GRPCCallsInput
internal import GRPCCore

/// The bottom of a call's chain: turns the call's options into the core's and runs the RPC.
///
/// It starts with the options the last interceptor passed on (the call's own when there are
/// none), except the transport, which was fixed when the call was made. Two paths lead to the
/// core (Design article, "The path of a call"): a call with a retry or hedging policy runs through `GRPCClient`, whose
/// executor owns them; every other call runs on the transport's stream directly (the raw path,
/// ``RawExchange``), which costs no executor, task group or deadline task. Both map deadlines,
/// cancellation, size limits, compression and errors the same way.
///
/// When the request side has half-closed by the time the stream opens (a unary or
/// server-streaming call, or any call whose `finish()` came with its start), every request
/// leaves with END_STREAM in one flush: the method is described to the transport as having a
/// unary request, so it holds the headers and message until the half-close. A peer that answers
/// before our END_STREAM resets the stream, and enough resets make swift-nio-http2 close the
/// whole connection (Design article, "Where the core needed help").
///
/// Its state lives in one machine (``StateMachine``); the close travels up exactly once.
final class GRPCCall2Internal: Sendable {
  private let pool: GRPCChannelPool
  private let transportType: GRPCTransportType
  private let transport: GRPCTransportID?
  private let previous: any ResponseLink
  private let state = LockedValue(Locked())

  private struct Locked {
    var machine = StateMachine()
    var task: Task<Void, Never>?
    /// Whether the current attempt's stream opened (for transparent retry).
    var streamOpened = false
    /// Whether response headers or messages went up the chain: then no attempt is retried.
    var delivered = false
    /// Whether the writes of requests known at the start were acknowledged (once per call,
    /// whatever the attempts).
    var knownWritesAcknowledged = false
    /// Request messages the transport accepted, for telling a stream that answers its requests
    /// from one that floods the client.
    var requestsSent = 0
  }

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
    let (first, writer, reader) = self.state.withLock { state in
      let first = state.machine.close()
      let (writer, reader) = state.machine.endRequests()
      state.task = nil
      return (first, writer, reader)
    }
    writer?.resume()
    reader?.resume(returning: false)
    if first {
      self.previous.close(trailers: trailers, error: error)
    }
  }

  /// Whether `error` ended an attempt whose stream never opened, so that no byte of the RPC
  /// reached the server, for a reason a new attempt may not meet (UNAVAILABLE).
  private func neverLeft(_ error: any Error) -> Bool {
    let opened = self.state.withLock { state in
      defer { state.streamOpened = false }
      return state.streamOpened
    }
    guard !opened, self.cancelReason == nil, !Task.isCancelled else { return false }
    let code = (error as? RPCError)?.code ?? (error as? GRPCError)?.code
    return code == .unavailable
  }

  /// The attempt's stream opened: requests may leave from now on.
  func markStreamOpened() {
    self.state.withLock { $0.streamOpened = true }
  }

  /// Why the RPC's task was cancelled from this side, if it was.
  var cancelReason: StateMachine.CancelReason? {
    self.state.withLock { $0.machine.cancelReason }
  }

  private func run(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) async {
    var callOptions = callOptions
    // Only when an interceptor changed them: setting a channel-level option drops the options'
    // cached channel key.
    if callOptions.transportType != self.transportType {
      callOptions.transportType = self.transportType
    }
    if callOptions.transport != self.transport {
      callOptions.transport = self.transport
    }
    var limit = callOptions.effectiveResponseSizeLimit
    var timer: DispatchWorkItem?
    defer { timer?.cancel() }
    let outcome: RPCOutcome
    do {
      let key = try self.pool.key(host: requestOptions.host, options: callOptions)
      limit = key.responseSizeLimit
      let coreOptions = try Self.coreOptions(callOptions, safety: requestOptions.safety, key: key)
      var descriptor = try MethodPath.descriptor(for: requestOptions.path)
      var metadata = try await RequestMetadata.make(for: callOptions, userAgent: key.userAgent)
      let lease = try self.pool.lease(for: key, options: callOptions)
      defer { lease.release() }
      let known = self.state.withLock { $0.machine.takeAllRequestsIfFinished() }
      if known != nil {
        // Every request is known: the transport holds them until the half-close, then sends
        // headers, messages and END_STREAM together.
        descriptor.type = .unary
      }
      let raw = coreOptions.executionPolicy == nil && !self.pool.config.sendsEveryCallThroughClient
      if callOptions.timeout > 0 {
        if raw {
          // The raw path runs no executor: the deadline's header is ours to send.
          metadata.replaceOrAddString(GRPCTimeout.header(seconds: callOptions.timeout), forKey: "grpc-timeout")
        }
        // Ours on both paths, since attempts that wait for a connection below span executor
        // calls.
        timer = self.armDeadline(after: callOptions.timeout)
      }
      let attempt = RPCAttempt(
        channel: lease.channel.client,
        descriptor: descriptor,
        options: coreOptions,
        metadata: metadata,
        known: known,
        coder: MessageCoder(marshaller: callOptions.marshaller),
        responseSizeLimit: limit
      )
      outcome = try await self.run(attempt, raw: raw, waitForReady: callOptions.waitForReady)
    } catch {
      // A server's status is read from the response; what is thrown here ended the call on this
      // side (the options, the token, the host, the deadline, an unreachable server, a request
      // that did not serialize), so no trailers came.
      outcome = RPCOutcome(trailers: nil, error: self.convert(error, headers: [:], limit: limit, options: callOptions))
    }
    var finalOutcome = outcome
    if let error = outcome.error, let reason = self.cancelReason {
      // The RPC ended because this side cancelled it: say why, keeping what the peer had sent.
      finalOutcome = RPCOutcome(trailers: nil, error: Self.cancelled(reason, headers: error.headers))
    } else if let error = outcome.error {
      finalOutcome.error = OversizeMetadata.explain(error, metadata: callOptions.initialMetadata)
    }
    self.close(trailers: finalOutcome.trailers, error: finalOutcome.error)
  }

  /// Runs `attempt` on the raw path or through `GRPCClient`, again when it failed before its
  /// stream opened.
  ///
  /// gRFC A6 transparent retry: an RPC that failed before its stream opened (its connection
  /// went away, or none was ready) sent no byte to the server, and one the server refused
  /// (REFUSED_STREAM) was not processed, so it is tried once more, whatever its retry policy. A call that waits for ready tries until a connection takes it
  /// (the transport gives up on a channel whose connection is being replaced after a few
  /// immediate tries), backing off, until its deadline or cancellation.
  private func run(_ attempt: RPCAttempt, raw: Bool, waitForReady: Bool) async throws -> RPCOutcome {
    var pacing = RetryPacing()
    // A stream asked of a connection that was closing (a GOAWAY, a reset), or of a channel
    // between two connections, is tried again, backing off, as gRPC core queues a call while
    // its channel connects: the channel either gets a new connection (usually within
    // milliseconds; seconds on a busy machine) or fails to, and then says so in other words,
    // which end the call. The count (about 15 s of tries) only guards against a channel that
    // stays between connections for good.
    var racedConnectionRetries = 20
    while true {
      do {
        let outcome = raw ? try await RawExchange.run(runner: self, attempt) : try await self.runOnClient(attempt)
        // An RPC the server never took is tried again as if it had never left.
        guard pacing.transparentRetryLeft || waitForReady, self.neverReachedServer(outcome, attempt) else {
          return outcome
        }
        try await pacing.beforeRetry()
      } catch where (pacing.transparentRetryLeft || waitForReady || racedConnectionRetries > 0) && self.neverLeft(error) {
        if !pacing.transparentRetryLeft && !waitForReady {
          // Only a connection that was closing under the stream earns more tries.
          guard Self.racedClosingConnection(error) else { throw error }
          racedConnectionRetries -= 1
        }
        try await pacing.beforeRetry()
      }
    }
  }

  /// When a failed attempt is tried again: the transparent retry at once, every later try
  /// after a pause that doubles from 10 ms up to 1 s.
  private struct RetryPacing {
    private(set) var transparentRetryLeft = true
    private var pause = Duration.milliseconds(10)

    mutating func beforeRetry() async throws {
      if !self.transparentRetryLeft {
        try await Task.sleep(for: self.pause)
        self.pause = min(self.pause * 2, .seconds(1))
      }
      self.transparentRetryLeft = false
    }
  }

  /// Whether `error` says the stream was asked of a connection that was closing, or of a
  /// channel between two connections (its load balancer had no ready subchannel: the moment
  /// after a GOAWAY), rather than that the channel has failed to connect (which fails a call
  /// fast unless it waits for ready). The transport tries 5 times without a pause, so a call
  /// made in that moment fails unless it is tried again a little later.
  private static func racedClosingConnection(_ error: any Error) -> Bool {
    let message = (error as? RPCError)?.message ?? (error as? GRPCError)?.message
    return Self.racedConnectionMessages.contains(message ?? "")
  }

  /// The transport's words for a stream asked of a connection that was closing or not yet
  /// replaced (grpc-swift-nio-transport `Connection`, `Subchannel`, `GRPCChannel`).
  private static let racedConnectionMessages: Set<String> = [
    "subchannel is unavailable",
    GRPCCall2Internal.closingConnectionMessage,
    "Channel isn't ready, no subchannel available.",
  ]

  /// The transport's words for a stream asked of a connection that was already closing; they
  /// may also reach the call as the failure of a stream that opened.
  private static let closingConnectionMessage = "subchannel isn't ready"

  /// The `GRPCClient` path: the executor runs retries and hedging.
  private func runOnClient(_ attempt: RPCAttempt) async throws -> RPCOutcome {
    try await attempt.channel.rawStreaming(
      request: StreamingClientRequest(metadata: attempt.metadata) { writer in
        self.markStreamOpened()
        if let known = attempt.known {
          try await writer.write(contentsOf: try known.map { try self.serialize($0, coder: attempt.coder) })
          self.acknowledgeKnownWrites(known.count)
        } else {
          while let message = await self.nextRequest() {
            try await writer.write(try self.serialize(message, coder: attempt.coder))
            self.acknowledgeWrites(1)
          }
        }
      },
      descriptor: attempt.descriptor,
      options: attempt.options
    ) { response in
      self.markStreamOpened()
      return await ResponseReader(runner: self, coder: attempt.coder, responseSizeLimit: attempt.responseSizeLimit)
        .read(response)
    }
  }

  // MARK: What the RPC asks of the runner

  /// Serializes a request; a failure closes the call with its error before the core turns the
  /// throw into its own.
  func serialize(_ message: any Sendable, coder: MessageCoder) throws(GRPCError) -> Data {
    do {
      return try coder.serialize(message)
    } catch {
      self.close(trailers: nil, error: error)
      throw error
    }
  }

  /// Reports the writes of the requests known at the start, once per call: a transparent
  /// retry writes them again.
  func acknowledgeKnownWrites(_ count: Int) {
    let first = self.state.withLock { state in
      defer { state.knownWritesAcknowledged = true }
      return !state.knownWritesAcknowledged
    }
    if first {
      self.acknowledgeWrites(count)
    }
  }

  /// Counts `count` accepted writes and reports them up the chain, under flow control.
  func acknowledgeWrites(_ count: Int) {
    let flowControl = self.state.withLock { state in
      state.requestsSent += count
      return state.machine.flowControl
    }
    guard flowControl else { return }
    for _ in 0..<count {
      self.previous.didWrite()
    }
  }

  /// The next request to send, waiting for one; `nil` when the request side is over.
  func nextRequest() async -> (any Sendable)? {
    while true {
      switch self.state.withLock({ $0.machine.nextRequest() }) {
      case .message(let message): return message
      case .end: return nil
      case .wait: break
      }
      await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
          // Parked only while there is still nothing to take; otherwise look again at once.
          if !self.state.withLock({ $0.machine.parkWriter(continuation) }) {
            continuation.resume()
          }
        }
      } onCancel: {
        self.endRequests()
      }
    }
  }

  /// What a response message found when it asked for demand (flow control).
  enum DemandOutcome: Sendable, Equatable {
    /// The application had asked for it already.
    case available
    /// It waited for the application to ask: the application reads slower than the server
    /// sends.
    case waited
    /// The call was cancelled meanwhile.
    case cancelled
  }

  /// Waits for a unit of demand before a response message goes up (flow control).
  func takeDemand() async -> DemandOutcome {
    if let ready = self.state.withLock({ $0.machine.takeDemand(reader: nil) }) {
      return ready ? .available : .cancelled
    }
    let ready = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        if let ready = self.state.withLock({ $0.machine.takeDemand(reader: continuation) }) {
          continuation.resume(returning: ready)
        }
      }
    } onCancel: {
      self.endRequests()
    }
    return ready ? .waited : .cancelled
  }

  /// Whether a stream that has delivered `delivered` response messages floods the client
  /// rather than answers its requests: no more requests will come (the application finished,
  /// every request was known at the start, or the RPC was cancelled), or the responses
  /// outnumber the requests sent by more than two to one (a subscription on a request side left
  /// open).
  func floodsClient(delivered: Int) -> Bool {
    self.state.withLock { state in
      state.machine.requestSideEnded || delivered > 2 * state.requestsSent + 2
    }
  }

  /// Whether response messages wait for demand.
  var isFlowControlled: Bool {
    self.state.withLock { $0.machine.flowControl }
  }

  /// Wakes a waiting writer and reader: the RPC is over or its task was cancelled.
  func endRequests() {
    let (writer, reader) = self.state.withLock { $0.machine.endRequests() }
    writer?.resume()
    reader?.resume(returning: false)
  }

  /// The response headers, up the chain.
  func deliver(initialMetadata: Metadata) {
    self.state.withLock { $0.delivered = true }
    self.previous.initialMetadata(initialMetadata)
  }

  /// A response message, up the chain.
  func deliver(message: any Sendable) {
    self.state.withLock { $0.delivered = true }
    self.previous.message(message)
  }

  /// Whether `outcome` is an RPC that never reached the server's application, before anything
  /// went up the chain, for a call whose requests can be written again: a stream the server
  /// refused (REFUSED_STREAM: it did no work on it; what a server shutting down gracefully
  /// answers to streams past its last one), or a connection that was closing when the stream
  /// was asked of it ("subchannel isn't ready").
  private func neverReachedServer(_ outcome: RPCOutcome, _ attempt: RPCAttempt) -> Bool {
    guard attempt.known != nil, let error = outcome.error else { return false }
    let unsent = StreamReset.isRefused(error)
      || [error.message, (error.cause as? RPCError)?.message].contains(Self.closingConnectionMessage)
    guard unsent else { return false }
    return self.state.withLock { !$0.delivered } && self.cancelReason == nil && !Task.isCancelled
  }

  // MARK: Errors and deadlines

  func convert(_ error: any Error, headers: Metadata, limit: Int, options: GRPCCallOptions? = nil) -> GRPCError {
    var converted = GRPCError(converting: error, headers: headers, responseSizeLimit: limit)
    if converted.code == .unavailable, let options, options.transport == nil,
      !options.transportType.isSecure, converted.message.contains("HTTP/2 connection preface")
    {
      // What a TLS server does to a plaintext client; the core's message does not say so.
      converted.message += " A server that expects TLS does this to a plaintext client: check transportType."
    }
    return converted
  }

  private static func cancelled(_ reason: StateMachine.CancelReason, headers: Metadata) -> GRPCError {
    switch reason {
    case .app:
      return GRPCError(code: .cancelled, message: "The call was cancelled", headers: headers)
    case .deadline:
      return GRPCError(code: .deadlineExceeded, message: "RPC timed out before completing", headers: headers)
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

  private func cancelRPC(_ reason: StateMachine.CancelReason) {
    let (actions, task) = self.state.withLock { state in
      (state.machine.cancel(reason), state.task)
    }
    actions.writer?.resume()
    actions.reader?.resume(returning: false)
    if actions.cancelTask {
      // The RPC ends with a cancellation and closes from its task, saying why.
      task?.cancel()
    }
    if actions.closeNow {
      self.close(trailers: nil, error: GRPCError(code: .cancelled, message: "The call was cancelled"))
    }
  }

  /// The core's options for a call with these options on the channel of `key`.
  ///
  /// - Throws: `INVALID_ARGUMENT` for an execution policy the core cannot take.
  private static func coreOptions(
    _ callOptions: GRPCCallOptions,
    safety: GRPCCallSafety,
    key: ChannelKey
  ) throws(GRPCError) -> CallOptions {
    var options = CallOptions.defaults
    if callOptions.timeout > 0 {
      options.timeout = .seconds(callOptions.timeout)
    }
    // The HTTP/2 transport limits *response* messages by `maxRequestMessageBytes` and ignores
    // `maxResponseMessageBytes` (Design article, "Where the core needed help"), so set both.
    options.maxRequestMessageBytes = key.responseSizeLimit
    options.maxResponseMessageBytes = key.responseSizeLimit
    options.compression = key.compression.core
    options.waitForReady = callOptions.waitForReady
    if key.enableRetry, let policy = callOptions.executionPolicy {
      options.executionPolicy = try policy.core(safety: safety)
    }
    return options
  }
}

/// What one attempt of an RPC needs, on either path to the core.
struct RPCAttempt: Sendable {
  var channel: any ChannelClient
  var descriptor: MethodDescriptor
  var options: CallOptions
  var metadata: Metadata
  /// Every request, when the request side had half-closed before the stream opened.
  var known: [any Sendable]?
  var coder: MessageCoder
  var responseSizeLimit: Int
}

/// How an RPC ended: the trailers the server sent (`nil` when it ended on this side) and the
/// error, if it failed.
struct RPCOutcome: Sendable {
  var trailers: Metadata?
  var error: GRPCError?
}

extension GRPCCall2Internal: RequestLink {
  func start(
    requestOptions: GRPCRequestOptions,
    callOptions: GRPCCallOptions,
    writes: [any Sendable],
    finish: Bool
  ) {
    let executor = self.pool.executor(host: requestOptions.host, options: callOptions)
    self.state.withLock { state in
      guard
        state.machine.start(writes: writes, finish: finish, flowControl: callOptions.enableFlowControl)
      else { return }
      // The task holds `self`, so the call runs to its close even if the caller lets go of it.
      state.task = Task(executorPreference: executor) {
        await self.run(requestOptions: requestOptions, callOptions: callOptions)
      }
    }
  }

  func write(_ message: any Sendable) {
    self.state.withLock { $0.machine.write(message) }?.resume()
  }

  func finish() {
    self.state.withLock { $0.machine.finish() }?.resume()
  }

  func cancel() {
    self.cancelRPC(.app)
  }

  func receiveNextMessages(_ count: Int) {
    self.state.withLock { $0.machine.addDemand(count) }?.resume(returning: true)
  }
}
