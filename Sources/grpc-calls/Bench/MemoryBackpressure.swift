internal import Dispatch
internal import Foundation
internal import GRPCCalls

/// `memory-backpressure`: the client's peak memory while a large server stream is read slowly,
/// with flow control on and off.
///
/// The reader processes one message per `readInterval` on a queue of its own: its handler hands
/// each message on and returns, as an application that keeps its handler's queue free does.
/// With flow control it asks for the next message only once the last one was processed, so the
/// server is held back and memory stays near the transport's read-ahead. Without it, messages
/// arrive as fast as the server sends them and wait for the reader, so memory grows with the
/// stream.
enum MemoryBackpressure {
  struct Settings: Sendable {
    var streamBytes: Int
    var messageBytes: Int
    var readInterval: Duration
    var window: Int

    /// 1 GiB in 1 MiB messages, one read per 10 ms: about 11 s per variant.
    static let full = Settings(
      streamBytes: 1 << 30,
      messageBytes: 1 << 20,
      readInterval: .milliseconds(10),
      window: 1 << 20
    )
    static let quick = Settings(
      streamBytes: 16 << 20,
      messageBytes: 1 << 20,
      readInterval: .milliseconds(2),
      window: 1 << 20
    )
  }

  /// Peak resident memory growth during the stream, in MiB.
  static func measure(target: String, flowControl: Bool, settings: Settings) async throws -> Double
  {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.enableFlowControl = flowControl
    options.http2TargetWindowSize = settings.window
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }

    let count = settings.streamBytes / settings.messageBytes
    let request = BenchRequests.stream(count: count, size: settings.messageBytes)
    let box = CallHolder()
    let finished = AsyncStream.makeStream(of: GRPCError?.self)
    let interval = settings.readInterval
    let processing = DispatchQueue(label: "bench.slow-reader")
    let handler = GRPCCallbackResponseHandler(queue: DispatchQueue(label: "bench.handler")) {
      message in
      processing.async {
        // The slow consumer: processing a message takes `interval`.
        withExtendedLifetime(message) {
          Thread.sleep(forTimeInterval: BenchClock.seconds(interval))
        }
        box.call?.receiveNextMessages(1)
      }
    } onClose: { _, error in
      finished.continuation.yield(error)
      finished.continuation.finish()
    }
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(
        host: target,
        path: "/\(BenchMethod.service)/\(BenchMethod.streamingOutput)"
      ),
      responseHandler: handler,
      callOptions: options,
      channelPool: pool
    )
    box.call = call

    let baseline = ResourceUsage.residentBytes()
    let peak = LockedValue(baseline)
    let sampler = Task {
      while !Task.isCancelled {
        let now = ResourceUsage.residentBytes()
        peak.withLock { $0 = max($0, now) }
        try? await Task.sleep(for: .milliseconds(20))
      }
    }
    call.receiveNextMessages(1)
    call.start()
    call.writeData(request)
    call.finish()
    var closeError: GRPCError?? = nil
    for await error in finished.stream {
      closeError = error
    }
    sampler.cancel()
    if let error = closeError ?? nil {
      throw BenchFailure(description: "memory-backpressure stream failed: \(error)")
    }
    return Double(peak.withLock { $0 } - baseline) / Double(1 << 20)
  }
}

/// Lets the handler, made before the call, reach the call.
final class CallHolder: Sendable {
  private let storage = LockedValue<GRPCCall2?>(nil)

  var call: GRPCCall2? {
    get { self.storage.withLock { $0 } }
    set { self.storage.withLock { $0 = newValue } }
  }
}
