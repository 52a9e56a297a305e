internal import Foundation
internal import GRPCCore
internal import Synchronization

/// The bottom of a call: turns the call's options into the core's and runs the RPC on it.
///
/// The RPC runs through `GRPCClient` (the core's executor) with pass-through serializers rather
/// than on `ClientTransport.withStream` directly: the executor owns deadlines, and will own
/// retries and hedging, which we must not re-implement. DESIGN.md §8 notes the raw path is
/// faster for unary calls with no retry policy; `grpc-calls bench` decides whether to add it.
///
/// Requests travel through an `AsyncStream` that the RPC's request producer drains, so writes
/// reach the transport in order; the stream is finished when the request side half-closes or
/// the RPC ends, after which writes are dropped.
final class GRPCCall2Internal: Sendable {
  private let requestOptions: GRPCRequestOptions
  private let callOptions: GRPCCallOptions
  private let dispatcher: ResponseDispatcher
  private let pool: GRPCChannelPool
  private let requests: AsyncStream<Data>
  private let requestSink: AsyncStream<Data>.Continuation
  private let task = Mutex(TaskState.notStarted)
  /// Response demand; `nil` when flow control is off.
  private let demand: MessageDemand?

  private enum TaskState {
    case notStarted
    case running(Task<Void, Never>)
    case cancelled
  }

  init(
    requestOptions: GRPCRequestOptions,
    callOptions: GRPCCallOptions,
    dispatcher: ResponseDispatcher,
    pool: GRPCChannelPool
  ) {
    self.requestOptions = requestOptions
    self.callOptions = callOptions
    self.dispatcher = dispatcher
    self.pool = pool
    (self.requests, self.requestSink) = AsyncStream.makeStream(of: Data.self)
    self.demand = callOptions.enableFlowControl ? MessageDemand() : nil
  }

  func receiveNextMessages(_ count: Int) {
    self.demand?.add(count)
  }

  func start() {
    self.task.withLock { state in
      guard case .notStarted = state else { return }
      // The task holds `self`, so the call runs to its close even if the caller lets go of it.
      state = .running(Task { await self.run() })
    }
  }

  func write(_ message: any Sendable) {
    switch RawMessage.bytes(of: message) {
    case .success(let data):
      self.requestSink.yield(data)
    case .failure(let error):
      self.dispatcher.close(trailers: nil, error: error)
      self.cancel()
    }
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
    running?.cancel()
    self.requestSink.finish()
  }

  private func run() async {
    let limit = self.callOptions.effectiveResponseSizeLimit
    do {
      let metadata = try await RequestMetadata.make(for: self.callOptions)
      let key = try ChannelKey(host: self.requestOptions.host, options: self.callOptions)
      let lease = try self.pool.lease(for: key)
      defer { lease.release() }
      let outcome = try await lease.channel.client.bidirectionalStreaming(
        request: StreamingClientRequest(metadata: metadata) { [requests, dispatcher, demand] writer in
          for await message in requests {
            // The writer returns once the transport accepted the message: that is what
            // didWriteData reports under flow control.
            try await writer.write(message)
            if demand != nil {
              dispatcher.didWrite()
            }
          }
        },
        descriptor: self.methodDescriptor,
        serializer: RawSerializer(),
        deserializer: RawDeserializer(),
        options: self.coreOptions
      ) { [dispatcher, demand] response in
        await ResponseReader(dispatcher: dispatcher, demand: demand, responseSizeLimit: limit)
          .read(response)
      }
      self.dispatcher.close(trailers: outcome.trailers, error: outcome.error)
    } catch {
      // A server's status is read by ResponseReader; what is thrown here ended the call on this
      // side (the token, the host, the deadline, an unreachable server), so no trailers came.
      let error = GRPCError(converting: error, headers: [:], responseSizeLimit: limit)
      self.dispatcher.close(trailers: nil, error: error)
    }
    self.requestSink.finish()
  }

  private var methodDescriptor: MethodDescriptor {
    // GRPCRequestOptions validated the path on creation.
    let path = MethodPath(self.requestOptions.path)!
    return MethodDescriptor(fullyQualifiedService: path.service, method: path.method)
  }

  /// The core's options for this call.
  private var coreOptions: CallOptions {
    var options = CallOptions.defaults
    if self.callOptions.timeout > 0 {
      options.timeout = .seconds(self.callOptions.timeout)
    }
    // The HTTP/2 transport limits *response* messages by `maxRequestMessageBytes` and ignores
    // `maxResponseMessageBytes` (DESIGN.md §8), so set both.
    options.maxRequestMessageBytes = self.callOptions.effectiveResponseSizeLimit
    options.maxResponseMessageBytes = self.callOptions.effectiveResponseSizeLimit
    return options
  }
}
