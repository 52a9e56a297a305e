import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

@testable import GRPCProtoCalls

/// A server stream that floods the client is handed to the async consumer's task, which reads
/// the transport itself (ResponsePull); the call still ends exactly as before when it is
/// cancelled, times out or fails, whether the consumer is reading or not. A global interceptor
/// would keep the stream with the call's task, and so would the `GRPCClient` path: the tests
/// take the raw path and hold the gate that keeps global interceptors away.
@Suite("async face: a flooding stream read by the consumer's task")
struct AsyncPulledStreamTests {
  typealias Response = Grpc_Testing_StreamingOutputCallResponse

  /// A test server whose calls take the raw path, the one that hands streams over, while no
  /// global interceptor is registered.
  static func withRawPathServer(_ body: (TestServer) async throws -> Void) async throws {
    try await GlobalInterceptorGate.exclusive {
      try await withTestServer(path: .raw, body)
    }
  }

  /// A request for `count` messages of `size` bytes, then one more `pauseSeconds` later.
  static func pausingStream(
    count: Int,
    size: Int32,
    pauseSeconds: Int
  ) -> Grpc_Testing_StreamingOutputCallRequest {
    var request = InteropRequests.stream(count: count, size: size)
    var last = InteropRequests.parameters(size: size)
    last.intervalUs = Int32(pauseSeconds * 1_000_000)
    request.responseParameters.append(last)
    return request
  }

  /// What reading every response of a stream came to.
  struct Reading {
    var count = 0
    var handed = false
    var error: GRPCError?
  }

  /// Reads every response of `request` through `service`.
  static func readAll(
    _ service: GRPCProtoService,
    _ request: Grpc_Testing_StreamingOutputCallRequest
  ) async -> Reading {
    let reading = LockedValue(Reading())
    do {
      try await service.serverStreaming(
        method: "StreamingOutputCall",
        request: request,
        responseType: Response.self
      ) { responses in
        defer { reading.withLock { $0.handed = responses.bridge.wasHandedStream } }
        for try await _ in responses {
          reading.withLock { $0.count += 1 }
        }
      }
    } catch {
      reading.withLock { $0.error = error as? GRPCError }
    }
    return reading.withLock { $0 }
  }

  /// Reads a stream of 20 messages whose 21st comes after the call's deadline, through the
  /// service `service` makes for a deadline. The deadline must leave time for the 20, which a
  /// busy machine may delay past any fixed figure: a reading the deadline cut short is tried
  /// again with a longer one.
  static func readPastDeadline(
    _ service: (TimeInterval) -> GRPCProtoService
  ) async -> Reading {
    var reading = Reading()
    for seconds in [8, 30, 90] {
      reading = await Self.readAll(
        service(TimeInterval(seconds)),
        Self.pausingStream(count: 20, size: 8, pauseSeconds: seconds + 20)
      )
      if reading.count == 20 { break }
    }
    return reading
  }

  @Test("every message arrives in order, and the consumer's task read the stream")
  func everyMessageInOrder() async throws {
    try await Self.withRawPathServer { server in
      var request = Grpc_Testing_StreamingOutputCallRequest()
      let sizes = (1 ... 500).map { Int32($0 % 97) }
      request.responseParameters = sizes.map { InteropRequests.parameters(size: $0) }
      let (received, handed) = try await server.service().serverStreaming(
        method: "StreamingOutputCall",
        request: request,
        responseType: Response.self
      ) { responses in
        var received: [Int32] = []
        for try await response in responses {
          received.append(Int32(response.payload.body.count))
        }
        return (received, responses.bridge.wasHandedStream)
      }
      #expect(received == sizes)
      #expect(handed, "the stream stayed with the call's task")
    }
  }

  @Test("a server status after the messages is thrown once they are read")
  func statusAfterMessages() async throws {
    try await Self.withRawPathServer { server in
      var request = InteropRequests.stream(count: 50, size: 8)
      request.responseStatus.code = 8  // RESOURCE_EXHAUSTED
      request.responseStatus.message = "enough"
      let reading = await Self.readAll(server.service(), request)
      #expect(reading.count == 50 && reading.handed)
      #expect(reading.error?.code == .resourceExhausted && reading.error?.message == "enough")
    }
  }

  @Test(
    "cancelled while the consumer waits on the transport: its read ends with CANCELLED, and the stream is reset"
  )
  func cancelledWhileReading() async throws {
    try await Self.withRawPathServer { server in
      // Through a proxy that keeps the client's frames: the server's handler, asleep until its
      // last message, does not notice the reset before it writes.
      let proxy = try FaultProxy(upstreamPort: server.server.port, recordingClientBytes: true)
      defer { proxy.close() }
      let service = server.service(host: "127.0.0.1:\(proxy.port)")
      // The cancel must come before the last message, which a busy machine may delay past any
      // fixed pause: a stream whose last message came first is tried again with a longer one.
      var error: GRPCError?
      for pause in [20, 60, 180] {
        error = await Self.cancelWhileReading(service, lastMessageAfter: pause)
        if error != nil { break }
      }
      #expect(error?.code == .cancelled, "\(String(describing: error))")
      let reset = await eventually { proxy.clientFrames.contains(where: \.isReset) ? true : nil }
      #expect(reset == true, "the client did not reset the stream")
    }
  }

  /// Reads 20 messages of a stream whose last comes `seconds` later, and cancels while the
  /// consumer's task reads the transport for it: what the read threw, `nil` when the last
  /// message came first.
  static func cancelWhileReading(
    _ service: GRPCProtoService,
    lastMessageAfter seconds: Int
  ) async -> GRPCError? {
    let request = Self.pausingStream(count: 20, size: 8, pauseSeconds: seconds)
    let reading = LockedValue(false)
    let task = Task {
      try await service.serverStreaming(
        method: "StreamingOutputCall",
        request: request,
        responseType: Response.self
      ) { responses in
        var iterator = responses.makeAsyncIterator()
        for _ in 0 ..< 20 {
          _ = try await iterator.next()
        }
        reading.withLock { $0 = responses.bridge.wasHandedStream }
        // The cancel must end this read, or it returns the last message.
        _ = try await iterator.next()
      }
    }
    #expect(await eventually { reading.withLock { $0 } ? true : nil } == true)
    task.cancel()
    do {
      try await task.value
      return nil
    } catch {
      return error as? GRPCError ?? GRPCError(code: .unknown, message: "\(error)")
    }
  }

  @Test("the deadline passes while the consumer waits on the transport: DEADLINE_EXCEEDED")
  func deadlineWhileReading() async throws {
    try await Self.withRawPathServer { server in
      let reading = await Self.readPastDeadline { seconds in
        var options = server.options
        options.timeout = seconds
        return server.service(options: options)
      }
      #expect(reading.count == 20 && reading.handed)
      #expect(reading.error?.code == .deadlineExceeded, "\(String(describing: reading.error))")
    }
  }

  @Test("leaving the body while the consumer is not reading cancels the call; the server stops")
  func leftWhileNotReading() async throws {
    try await Self.withRawPathServer { server in
      let handed = try await server.service().serverStreaming(
        method: "StreamingOutputCall",
        request: InteropRequests.longStream(),
        responseType: Response.self
      ) { responses in
        var iterator = responses.makeAsyncIterator()
        for _ in 0 ..< 5 {
          _ = try await iterator.next()
        }
        return responses.bridge.wasHandedStream
      }
      #expect(handed)
      #expect(await server.streamStopped(), "the server kept streaming: \(server.streamProgress)")
    }
  }

  @Test(
    "on a registered transport whose writer does not fail the responses (in-process), the stream stays with the call's task, and a deadline ends a waiting read"
  )
  func registeredTransportKeepsStream() async throws {
    let registry = GRPCTransportRegistry()
    let id = GRPCTransportID("test.in-process")
    registry.register(
      InteropServer.inProcessTransportFactory(recorder: InteropServerRecorder()),
      for: id
    )
    let pool = GRPCChannelPool(
      config: .init(idleTimeout: .seconds(30), transportRegistry: registry)
    )
    defer { pool.disconnectAll() }
    let reading = await Self.readPastDeadline { seconds in
      var options = GRPCCallOptions()
      options.transport = id
      options.timeout = seconds
      return GRPCProtoService(
        host: "in-process.invalid:1",
        packageName: "grpc.testing",
        serviceName: "TestService",
        callOptions: options,
        channelPool: pool
      )
    }
    #expect(reading.count == 20 && !reading.handed)
    #expect(reading.error?.code == .deadlineExceeded, "\(String(describing: reading.error))")
  }

  @Test("a response over the size limit fails the call with RESOURCE_EXHAUSTED, mid-stream")
  func oversizeMidStream() async throws {
    try await Self.withRawPathServer { server in
      var options = server.options
      options.responseSizeLimit = 1024
      var request = InteropRequests.stream(count: 30, size: 8)
      request.responseParameters.append(InteropRequests.parameters(size: 4096))
      let reading = await Self.readAll(server.service(options: options), request)
      #expect(reading.count == 30 && reading.handed)
      #expect(reading.error?.code == .resourceExhausted, "\(String(describing: reading.error))")
    }
  }
}
