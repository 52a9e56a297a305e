internal import Foundation
internal import GRPCCore
internal import Synchronization

/// The bottom of a call's chain: turns the call's options into the core's and runs the RPC.
///
/// It starts with the options the last interceptor passed on (the call's own when there are
/// none), except the transport, which was fixed when the call was made. The RPC runs through
/// `GRPCClient` (the core's executor) with pass-through serializers rather than on
/// `ClientTransport.withStream` directly: the executor owns deadlines, and will own retries and
/// hedging, which we must not re-implement. DESIGN.md §8 notes the raw path is faster for
/// unary calls with no retry policy; `grpc-calls bench` decides whether to add it.
///
/// Requests travel through an `AsyncStream` that the RPC's request producer drains, so writes
/// reach the transport in order; the stream is finished when the request side half-closes or
/// the RPC ends, after which writes are dropped. A marshaller, if the options carry one,
/// serializes each request as the producer takes it and deserializes each response before it
/// travels up. The close travels up exactly once.
final class GRPCCall2Internal: Sendable {
  private let pool: GRPCChannelPool
  private let transportType: GRPCTransportType
  private let transport: GRPCTransportID?
  private let previous: any ResponseLink
  private let requests: AsyncStream<any Sendable>
  private let requestSink: AsyncStream<any Sendable>.Continuation
  private let task = Mutex(TaskState.notStarted)
  private let closed = Atomic(false)
  /// Response demand; used only when the call starts with flow control on.
  private let demand = MessageDemand()

  private enum TaskState {
    case notStarted
    case running(Task<Void, Never>)
    case cancelled
  }

  /// - Parameters:
  ///   - pool: Where the channel comes from.
  ///   - transportType: The transport type, as the call was made with.
  ///   - transport: The registered transport, as the call was made with.
  ///   - previous: Where responses go: the last interceptor, or the call's dispatcher.
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
    (self.requests, self.requestSink) = AsyncStream.makeStream(of: (any Sendable).self)
  }

  /// Closes the call towards the application, once.
  private func close(trailers: Metadata?, error: GRPCError?) {
    guard !self.closed.exchange(true, ordering: .relaxed) else { return }
    self.previous.close(trailers: trailers, error: error)
  }

  private func run(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) async {
    var callOptions = callOptions
    callOptions.transportType = self.transportType
    callOptions.transport = self.transport
    var limit = callOptions.effectiveResponseSizeLimit
    let demand = callOptions.enableFlowControl ? self.demand : nil
    let coder = MessageCoder(marshaller: callOptions.marshaller)
    do {
      let key = try ChannelKey(host: requestOptions.host, options: callOptions)
      limit = key.responseSizeLimit
      let coreOptions = try Self.coreOptions(callOptions, safety: requestOptions.safety, key: key)
      let descriptor = try MethodPath.descriptor(for: requestOptions.path)
      let metadata = try await RequestMetadata.make(for: callOptions, userAgent: key.userAgent)
      let lease = try self.pool.lease(for: key, options: callOptions)
      defer { lease.release() }
      let outcome = try await lease.channel.client.rawStreaming(
        request: StreamingClientRequest(metadata: metadata) { writer in
          try await self.sendRequests(to: writer, coder: coder, acknowledge: demand != nil)
        },
        descriptor: descriptor,
        options: coreOptions
      ) { [previous, limit] response in
        await ResponseReader(
          previous: previous,
          demand: demand,
          coder: coder,
          responseSizeLimit: limit
        ).read(response)
      }
      self.close(trailers: outcome.trailers, error: outcome.error)
    } catch {
      // A server's status is read by ResponseReader; what is thrown here ended the call on this
      // side (the options, the token, the host, the deadline, an unreachable server, a request
      // that did not serialize), so no trailers came.
      var error = GRPCError(converting: error, headers: [:], responseSizeLimit: limit)
      if error.code == .unavailable, callOptions.transport == nil, !callOptions.transportType.isSecure,
        error.message.contains("HTTP/2 connection preface")
      {
        // What a TLS server does to a plaintext client; the core's message does not say so.
        error.message += " A server that expects TLS does this to a plaintext client: check transportType."
      }
      self.close(trailers: nil, error: error)
    }
    self.requestSink.finish()
  }

  /// Drains the requests into the RPC until the request side half-closes.
  ///
  /// - Parameter acknowledge: Whether each accepted write travels up as `didWriteData`.
  private func sendRequests(
    to writer: RPCWriter<Data>,
    coder: MessageCoder,
    acknowledge: Bool
  ) async throws {
    for await message in self.requests {
      let bytes: Data
      do {
        bytes = try coder.serialize(message)
      } catch {
        // Close with our error before the core turns the throw into its own.
        self.close(trailers: nil, error: error)
        throw error
      }
      // The writer returns once the transport accepted the message: that is what didWriteData
      // reports under flow control.
      try await writer.write(bytes)
      if acknowledge {
        self.previous.didWrite()
      }
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
    // `maxResponseMessageBytes` (DESIGN.md §8), so set both.
    options.maxRequestMessageBytes = key.responseSizeLimit
    options.maxResponseMessageBytes = key.responseSizeLimit
    options.compression = key.compression.core
    if key.enableRetry, let policy = callOptions.executionPolicy {
      options.executionPolicy = try policy.core(safety: safety)
    }
    return options
  }
}

extension GRPCCall2Internal: RequestLink {
  func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    self.task.withLock { state in
      guard case .notStarted = state else { return }
      // The task holds `self`, so the call runs to its close even if the caller lets go of it.
      state = .running(Task { await self.run(requestOptions: requestOptions, callOptions: callOptions) })
    }
  }

  func write(_ message: any Sendable) {
    self.requestSink.yield(message)
  }

  func finish() {
    self.requestSink.finish()
  }

  func cancel() {
    let running: Task<Void, Never>? = self.task.withLock { state in
      defer { state = .cancelled }
      if case .running(let task) = state { return task }
      return nil
    }
    self.requestSink.finish()
    if let running {
      // The RPC ends with CANCELLED and closes from its task.
      running.cancel()
    } else {
      self.close(trailers: nil, error: GRPCError(code: .cancelled, message: "The call was cancelled"))
    }
  }

  func receiveNextMessages(_ count: Int) {
    self.demand.add(count)
  }
}
