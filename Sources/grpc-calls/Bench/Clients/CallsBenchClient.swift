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
  init(
    target: String,
    flushCoalescing: Bool,
    flowControl: Bool = false,
    passThroughInterceptors: Int = 0,
    inline: Bool = false,
    interceptors: [any GRPCInterceptorFactory] = []
  ) {
    self.target = target
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.flushCoalescing = flushCoalescing
    options.enableFlowControl = flowControl
    options.interceptorFactories = Array(
      repeating: GRPCClosureInterceptorFactory { GRPCInterceptor(manager: $0, executesInline: inline) },
      count: passThroughInterceptors
    ) + interceptors
    self.options = options
  }

  func unary(_ request: Data) async throws -> Int {
    let (call, events) = try self.makeCall(BenchMethod.unary)
    call.receiveNextMessages(1)
    call.start()
    call.writeData(request)
    call.finish()
    var size = 0
    for try await message in events {
      size += message.count
    }
    return size
  }

  func pingPong(rounds: Int, request: Data, lap: @escaping @Sendable () -> Void) async throws {
    let (call, events) = try self.makeCall(BenchMethod.fullDuplex)
    call.start()
    var iterator = events.makeAsyncIterator()
    for _ in 0..<rounds {
      // With flow control each round trip also asks for its response (L49's read loop).
      call.receiveNextMessages(1)
      call.writeData(request)
      guard try await iterator.next() != nil else {
        throw BenchFailure(description: "ping-pong stream ended early")
      }
      lap()
    }
    call.finish()
    while try await iterator.next() != nil {}
  }

  func serverStream(_ request: Data) async throws -> (messages: Int, bytes: Int) {
    let (call, events) = try self.makeCall(BenchMethod.streamingOutput)
    // Under flow control, ask for everything: this scenario measures throughput.
    call.receiveNextMessages(Int.max / 2)
    call.start()
    call.writeData(request)
    call.finish()
    var result = (messages: 0, bytes: 0)
    for try await message in events {
      result.messages += 1
      result.bytes += message.count
    }
    return result
  }

  func close() {
    self.pool.disconnectAll()
  }

  /// A call whose responses arrive as a stream that ends at the close (throwing on error).
  private func makeCall(
    _ method: String
  ) throws -> (GRPCCall2, AsyncThrowingStream<Data, any Error>) {
    let (events, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
    let handler = GRPCCallbackResponseHandler(queue: self.queue) { data in
      continuation.yield(data as? Data ?? Data())
    } onClose: { _, error in
      continuation.finish(throwing: error)
    }
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(
        host: self.target,
        path: "/\(BenchMethod.service)/\(method)"
      ),
      responseHandler: handler,
      callOptions: self.options,
      channelPool: self.pool
    )
    return (call, events)
  }
}
