internal import Dispatch
internal import Foundation
internal import GRPCCalls
internal import GRPCCore

/// Makes calls through this library's `GRPCCall2`.
struct CallsBenchClient: BenchClient {
  let name = "grpc-calls"
  let target: String
  let options: GRPCCallOptions
  let pool = GRPCChannelPool()
  /// Callbacks are tiny; a concurrent queue lets calls in flight complete in parallel while each
  /// call's own callbacks stay serial.
  private let queue = DispatchQueue(label: "bench.grpc-calls", attributes: .concurrent)

  /// - Parameters:
  ///   - passThroughInterceptors: How many base-class interceptors (which pass every event on)
  ///     each call goes through: the cost of the interceptor chain.
  ///   - inline: Whether those interceptors run inline (`executesInline`) rather than on
  ///     queues of their own.
  ///   - interceptors: Interceptors each call goes through after the pass-through ones.
  ///   - balancing: The channel's balancer; `nil` for the default (pick-first).
  init(
    target: String,
    flushCoalescing: Bool,
    flowControl: Bool = false,
    passThroughInterceptors: Int = 0,
    inline: Bool = false,
    interceptors: [any GRPCInterceptorFactory] = [],
    balancing: GRPCLoadBalancingPolicy? = nil
  ) {
    self.target = target
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.loadBalancingPolicy = balancing
    options.flushCoalescing = flushCoalescing
    options.enableFlowControl = flowControl
    options.interceptorFactories =
      Array(
        repeating: GRPCClosureInterceptorFactory {
          GRPCInterceptor(manager: $0, executesInline: inline)
        },
        count: passThroughInterceptors
      ) + interceptors
    self.options = options
  }

  func unary(_ request: Data) async throws -> Int {
    try await self.countedResponses(BenchMethod.unary, request: request, demand: 1).bytes
  }

  /// Drives the exchange from the handler, as a callback API is used: each response's callback
  /// writes the next request (the bench's task only waits for the close). The callbacks run on
  /// a serial queue of the stream's own, as an app's one conversation would: a default-queue
  /// interceptor's events then run in the same thread's turn as the handler's (on the shared
  /// concurrent queue, each request the handler writes wakes another thread for it).
  func pingPong(rounds: Int, request: Data, lap: @escaping @Sendable () -> Void) async throws {
    let requestOptions = try self.requestOptions(BenchMethod.fullDuplex)
    let flowControl = self.options.enableFlowControl
    try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
      // Callbacks run one at a time, so the lock only publishes the call to them; it is dropped
      // at the close, which breaks the call -> handler -> call cycle.
      let state = LockedValue<(call: GRPCCall2?, answered: Int)>((nil, 0))
      let handler = GRPCCallbackResponseHandler(queue: DispatchQueue(label: "bench.ping-pong")) {
        _ in
        lap()
        let (call, answered) = state.withLock { state in
          state.answered += 1
          return (state.call, state.answered)
        }
        guard let call else { return }
        if answered < rounds {
          // With flow control each round trip also asks for its response (L49's read loop).
          if flowControl { call.receiveNextMessages(1) }
          call.writeData(request)
        } else {
          call.finish()
        }
      } onClose: { _, error in
        let answered = state.withLock { state in
          state.call = nil
          return state.answered
        }
        if let error {
          done.resume(throwing: error)
        } else if answered < rounds {
          done.resume(throwing: BenchFailure(description: "ping-pong stream ended early"))
        } else {
          done.resume()
        }
      }
      let call = self.newCall(requestOptions, handler: handler)
      state.withLock { $0.call = call }
      call.receiveNextMessages(1)
      call.start()
      call.writeData(request)
    }
  }

  func serverStream(_ request: Data) async throws -> (messages: Int, bytes: Int) {
    // Under flow control, ask for everything: this scenario measures throughput.
    try await self.countedResponses(
      BenchMethod.streamingOutput,
      request: request,
      demand: Int.max / 2
    )
  }

  func close() {
    self.pool.disconnectAll()
  }

  /// Makes a call of one request, counts its responses in the handler, as a callback API is
  /// used, and waits for the close with one continuation, the least a callback API can be
  /// awaited with (an `AsyncThrowingStream` of the responses cost a task switch per message,
  /// which is the bench's, not the library's).
  private func countedResponses(
    _ method: String,
    request: Data,
    demand: Int
  ) async throws -> (messages: Int, bytes: Int) {
    let requestOptions = try self.requestOptions(method)
    return try await withCheckedThrowingContinuation { done in
      // The handler's callbacks for one call run one at a time, in order: the counts are
      // complete when the close runs.
      let counts = LockedValue((messages: 0, bytes: 0))
      let handler = GRPCCallbackResponseHandler(queue: self.queue) { data in
        counts.withLock { counts in
          counts.messages += 1
          counts.bytes += (data as? Data)?.count ?? 0
        }
      } onClose: { _, error in
        if let error {
          done.resume(throwing: error)
        } else {
          done.resume(returning: counts.withLock { $0 })
        }
      }
      let call = self.newCall(requestOptions, handler: handler)
      call.receiveNextMessages(demand)
      call.start()
      call.writeData(request)
      call.finish()
    }
  }

  /// A call with this client's options and pool.
  private func newCall(
    _ requestOptions: GRPCRequestOptions,
    handler: GRPCCallbackResponseHandler
  ) -> GRPCCall2 {
    GRPCCall2(
      requestOptions: requestOptions,
      responseHandler: handler,
      callOptions: self.options,
      channelPool: self.pool
    )
  }

  private func requestOptions(_ method: String) throws -> GRPCRequestOptions {
    try GRPCRequestOptions(host: self.target, path: "/\(BenchMethod.service)/\(method)")
  }
}
