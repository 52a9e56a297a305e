internal import Dispatch
internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCProtoCalls
internal import SwiftProtobuf

/// `leak`: how much the process's resident memory grows over many sequential unary calls, one
/// face of the library at a time.
///
/// Each face first makes warm-up calls, so that its connection, caches and allocator pools
/// exist; then the resident set is read, the measured calls run, and it is read again. Memory
/// that each call leaves behind grows with the number of calls; a face that gives back what
/// it takes stays near zero. The reading is the current resident set, not the peak: a peak
/// only rises, and a transient high would hide a steady state.
enum LeakScenario {
  struct Settings: Sendable {
    var calls: Int
    var warmupCalls: Int

    static let full = Settings(calls: 100_000, warmupCalls: 10_000)
    static let quick = Settings(calls: 2_000, warmupCalls: 200)
  }

  /// The ways of making one unary-style call, each measured on its own.
  enum Face: String, CaseIterable, Sendable {
    /// `GRPCCall2` with a `GRPCCallbackResponseHandler`, raw bytes.
    case rawCallback = "raw-callback"
    /// The generated callback method, with a `GRPCUnaryResponseHandler`.
    case protoCallback = "proto-callback"
    /// The generated async/await unary method.
    case asyncUnary = "async-unary"
    /// The generated async/await StreamingOutputCall, asking for one small response.
    case asyncServerStreaming = "async-server-streaming"
    /// `GRPCCall2` through two interceptors that pass every event on.
    case interceptors2 = "interceptors-2"
  }

  /// Measures every face against the interop server at `target`; adds one `rss_growth_mb`
  /// record per face to `report` and prints it.
  static func run(target: String, settings: Settings, into report: BenchReport) async throws {
    let calls = try LeakCalls(target: target)
    defer { calls.close() }
    for face in Face.allCases {
      for _ in 0 ..< settings.warmupCalls {
        try await calls.call(face)
      }
      let before = await self.settledResidentBytes()
      for _ in 0 ..< settings.calls {
        try await calls.call(face)
      }
      let after = await self.settledResidentBytes()
      let growth = Double(after - before) / Double(1 << 20)
      report.add("leak", "grpc-calls", face.rawValue, "rss_growth_mb", growth)
      let figure = String(format: "%+.2f", growth)
      Console.line(
        "leak \(face.rawValue): RSS \(figure) MiB over \(settings.calls) calls"
          + " (after \(settings.warmupCalls) warm-up calls)"
      )
    }
  }

  /// The resident set once the last call's teardown, which finishes on the transport's threads
  /// after the call returned, had a moment to run: both readings are taken the same way.
  private static func settledResidentBytes() async -> Int {
    try? await Task.sleep(for: .milliseconds(100))
    return ResourceUsage.residentBytes()
  }
}

/// What the leak and soak scenarios' calls reuse from call to call: one channel pool, one
/// service, the requests, made once.
struct LeakCalls: Sendable {
  private let pool: GRPCChannelPool
  private let service: TestService
  private let requestOptions: GRPCRequestOptions
  private let rawOptions: GRPCCallOptions
  private let interceptedOptions: GRPCCallOptions
  private let rawRequest: Data
  private let request: Grpc_Testing_SimpleRequest
  private let streamRequest: Grpc_Testing_StreamingOutputCallRequest
  /// Callbacks are short, so one serial queue serves every call's.
  private let queue = DispatchQueue(label: "bench.leak")

  init(target: String) throws {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    self.rawOptions = options
    var intercepted = options
    intercepted.interceptorFactories = [
      GRPCClosureInterceptorFactory { GRPCInterceptor(manager: $0) },
      GRPCClosureInterceptorFactory { GRPCInterceptor(manager: $0) },
    ]
    self.interceptedOptions = intercepted
    let pool = GRPCChannelPool()
    self.pool = pool
    self.service = TestService(host: target, callOptions: options, channelPool: pool)
    self.requestOptions = try GRPCRequestOptions(
      host: target,
      path: "/\(BenchMethod.service)/\(BenchMethod.unary)"
    )
    self.rawRequest = BenchSlices.oneByteUnary
    self.request = try Grpc_Testing_SimpleRequest(serializedBytes: BenchSlices.oneByteUnary)
    self.streamRequest = try Grpc_Testing_StreamingOutputCallRequest(
      serializedBytes: BenchRequests.stream(count: 1, size: 1)
    )
  }

  /// One call through `face`; throws when it does not succeed.
  func call(_ face: LeakScenario.Face) async throws {
    switch face {
    case .rawCallback:
      try await self.rawUnary(options: self.rawOptions)
    case .interceptors2:
      try await self.rawUnary(options: self.interceptedOptions)
    case .protoCallback:
      try await self.protoCallbackUnary()
    case .asyncUnary:
      _ = try await self.service.unaryCall(self.request)
    case .asyncServerStreaming:
      let received: Int = try await self.service.streamingOutputCall(self.streamRequest) {
        responses in
        var count = 0
        for try await _ in responses {
          count += 1
        }
        return count
      }
      guard received == 1 else {
        throw BenchFailure(description: "leak: expected 1 streamed response, got \(received)")
      }
    }
  }

  func close() {
    self.pool.disconnectAll()
  }

  private func rawUnary(options: GRPCCallOptions) async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let handler = GRPCCallbackResponseHandler(
        queue: self.queue,
        onClose: { _, error in
          if let error {
            continuation.resume(throwing: error)
          } else {
            continuation.resume()
          }
        }
      )
      let call = GRPCCall2(
        requestOptions: self.requestOptions,
        responseHandler: handler,
        callOptions: options,
        channelPool: self.pool
      )
      call.receiveNextMessages(1)
      call.start()
      call.writeData(self.rawRequest)
      call.finish()
    }
  }

  private func protoCallbackUnary() async throws {
    try await withCheckedThrowingContinuation {
      (continuation: CheckedContinuation<Void, any Error>) in
      let handler = GRPCUnaryResponseHandler<Grpc_Testing_SimpleResponse>(queue: self.queue) {
        _,
        error in
        if let error {
          continuation.resume(throwing: error)
        } else {
          continuation.resume()
        }
      }
      self.service.unaryCall(message: self.request, responseHandler: handler).start()
    }
  }
}
