import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

@testable import GRPCLegacy

/// v1 calls over loopback against the in-process interop server: gRPC's interop cases as a
/// gRPC Objective-C app would run them.
@Suite("v1 GRPCCall over loopback")
struct GRPCCallTests {
  /// Collects what a v1 call wrote, and waits for its end.
  final class Collector: Sendable {
    private let state = LockedValue<(values: [Data], end: GRPCError??)>(([], nil))

    var writeable: GRXHandlerWriteable {
      GRXHandlerWriteable(
        valueHandler: { value in
          if let data = value as? Data { self.state.withLock { $0.values.append(data) } }
        },
        completionHandler: { error in
          let converted = error.map {
            ($0 as? GRPCError) ?? GRPCError(code: .unknown, message: "\($0)")
          }
          self.state.withLock { $0.end = .some(converted) }
        }
      )
    }

    var values: [Data] { self.state.withLock { $0.values } }

    func end() async throws -> GRPCError? {
      let end = await eventually { self.state.withLock { $0.end } }
      return try #require(end, "the call did not end")
    }
  }

  static let service = "/grpc.testing.TestService/"

  static func call(_ server: TestServer, _ method: String, _ requests: GRXWriter) -> GRPCCall {
    GRPCCall(
      host: server.server.target,
      path: Self.service + method,
      requestsWriter: requests,
      callOptions: server.options,
      channelPool: server.pool
    )
  }

  @Test("large unary: the golden 314159-byte response")
  func largeUnary() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_SimpleRequest()
      request.responseSize = 314_159
      request.payload.body = Data(count: 271_828)
      let collector = Collector()
      let call = Self.call(server, "UnaryCall", GRXWriter(value: try request.serializedData()))
      call.start(with: collector.writeable)
      let end = try await collector.end()
      #expect(end == nil, "\(String(describing: end))")
      let response = try Grpc_Testing_SimpleResponse(
        serializedBytes: try #require(collector.values.first)
      )
      #expect(response.payload.body.count == 314_159)
      #expect(call.responseTrailers != nil)
    }
  }

  @Test("client streaming from a writer of four requests: aggregated 74922")
  func clientStreaming() async throws {
    try await withTestServer { server in
      let requests: [any Sendable] = try [27182, 8, 1828, 45904].map { size in
        var request = Grpc_Testing_StreamingInputCallRequest()
        request.payload.body = Data(count: size)
        return try request.serializedData()
      }
      let collector = Collector()
      Self.call(server, "StreamingInputCall", GRXWriter(values: requests)).start(
        with: collector.writeable
      )
      #expect(try await collector.end() == nil)
      let response = try Grpc_Testing_StreamingInputCallResponse(
        serializedBytes: try #require(collector.values.first)
      )
      #expect(response.aggregatedPayloadSize == 74922)
    }
  }

  @Test("server streaming: four sizes, in order")
  func serverStreaming() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [31415, 9, 2653, 58979].map { size in
        var parameters = Grpc_Testing_ResponseParameters()
        parameters.size = Int32(size)
        return parameters
      }
      let collector = Collector()
      Self.call(server, "StreamingOutputCall", GRXWriter(value: try request.serializedData()))
        .start(with: collector.writeable)
      #expect(try await collector.end() == nil)
      let sizes = try collector.values.map {
        try Grpc_Testing_StreamingOutputCallResponse(serializedBytes: $0).payload.body.count
      }
      #expect(sizes == [31415, 9, 2653, 58979])
    }
  }

  @Test(
    "ping-pong through a buffered pipe: four rounds, each request written after the last response"
  )
  func pingPong() async throws {
    try await withTestServer { server in
      let sizes = [(31415, 27182), (9, 8), (2653, 1828), (58979, 45904)]
      let requests = try sizes.map { response, payload in
        var request = Grpc_Testing_StreamingOutputCallRequest()
        var parameters = Grpc_Testing_ResponseParameters()
        parameters.size = Int32(response)
        request.responseParameters = [parameters]
        request.payload.body = Data(count: payload)
        return try request.serializedData()
      }
      let pipe = GRXBufferedPipe()
      pipe.writeValue(requests[0])
      let received = LockedValue<[Int]>([])
      let end = LockedValue<GRPCError??>(nil)
      let writeable = GRXHandlerWriteable(
        valueHandler: { value in
          let size =
            (try? Grpc_Testing_StreamingOutputCallResponse(serializedBytes: value as! Data))?
            .payload.body.count ?? -1
          let count = received.withLock {
            $0.append(size)
            return $0.count
          }
          if count < requests.count {
            pipe.writeValue(requests[count])
          } else {
            pipe.writesFinished(withError: nil)
          }
        },
        completionHandler: { error in end.withLock { $0 = .some(error as? GRPCError) } }
      )
      Self.call(server, "FullDuplexCall", pipe).start(with: writeable)
      let closed = await eventually { end.withLock { $0 } }
      #expect(closed != nil && closed! == nil, "\(String(describing: closed))")
      #expect(received.withLock { $0 } == sizes.map(\.0))
    }
  }

  @Test("cancel after begin: CANCELLED \"Canceled by app\", and the requests writer ends")
  func cancelAfterBegin() async throws {
    try await withTestServer { server in
      let pipe = GRXBufferedPipe()
      let collector = Collector()
      let call = Self.call(server, "StreamingInputCall", pipe)
      call.start(with: collector.writeable)
      call.cancel()
      // As in gRPC Objective-C, the call has finished when cancel returns.
      #expect(call.state == .finished)
      let end = try await collector.end()
      #expect(
        end?.code == .cancelled && end?.message == "Canceled by app",
        "\(String(describing: end))"
      )
      #expect(call.responseTrailers == nil)
      #expect(await eventually { pipe.state == .finished ? true : nil } == true)
    }
  }

  @Test("failures: a 1 ms deadline → 4, an unimplemented method → 12, nothing listening → 14")
  func failures() async throws {
    try await withTestServer { server in
      var sleepy = Grpc_Testing_StreamingOutputCallRequest()
      var parameters = Grpc_Testing_ResponseParameters()
      parameters.intervalUs = 1_000_000
      sleepy.responseParameters = [parameters]
      let timed = Self.call(
        server,
        "StreamingOutputCall",
        GRXWriter(value: try sleepy.serializedData())
      )
      timed.timeout = 0.001
      let timedOut = Collector()
      timed.start(with: timedOut.writeable)
      #expect(try await timedOut.end()?.code == .deadlineExceeded)

      let missing = Collector()
      Self.call(server, "UnimplementedCall", GRXWriter(value: Data())).start(
        with: missing.writeable
      )
      #expect(try await missing.end()?.code == .unimplemented)
    }
    let unreachable = Collector()
    var options = GRPCCallOptions()
    options.transportType = .insecure
    GRPCCall(
      host: "127.0.0.1:1",
      path: Self.service + "EmptyCall",
      requestsWriter: GRXWriter(value: Data()),
      callOptions: options
    ).start(with: unreachable.writeable)
    #expect(try await unreachable.end()?.code == .unavailable)
  }

  @Test(
    "calls on a channel backing off after failed connects end UNAVAILABLE, never with the requests writer's error"
  )
  func failingAtOnceKeepsItsStatus() async throws {
    // The first call's connect fails and the channel backs off: each later call fails as soon
    // as it starts, racing the start of its requests writer.
    let pool = GRPCChannelPool()
    defer { pool.disconnectAll() }
    var options = GRPCCallOptions()
    options.transportType = .insecure
    var codes: [String: Int] = [:]
    for _ in 0 ..< 200 {
      let collector = Collector()
      GRPCCall(
        host: "127.0.0.1:1",
        path: Self.service + "EmptyCall",
        requestsWriter: GRXWriter(value: Data()),
        callOptions: options,
        channelPool: pool
      ).start(with: collector.writeable)
      let end = try await collector.end()
      codes[end.map { "\($0.code)" } ?? "ok", default: 0] += 1
    }
    #expect(codes == ["\(RPCError.Code.unavailable)": 200])
  }

  @Test("request headers round-trip: the echoed initial metadata and -bin trailer come back")
  func metadata() async throws {
    try await withTestServer { server in
      let collector = Collector()
      let call = Self.call(
        server,
        "UnaryCall",
        GRXWriter(value: try Grpc_Testing_SimpleRequest().serializedData())
      )
      call.requestHeaders.addString(
        "test_initial_metadata_value",
        forKey: "x-grpc-test-echo-initial"
      )
      call.requestHeaders.addBinary([0xab, 0xab, 0xab], forKey: "x-grpc-test-echo-trailing-bin")
      call.start(with: collector.writeable)
      #expect(try await collector.end() == nil)
      #expect(
        call.responseHeaders.map { Array($0[stringValues: "x-grpc-test-echo-initial"]) } == [
          "test_initial_metadata_value"
        ]
      )
      #expect(
        call.responseTrailers.map { Array($0[binaryValues: "x-grpc-test-echo-trailing-bin"]) } == [
          [0xab, 0xab, 0xab]
        ]
      )
    }
  }

  @Test("without call options the host's settings apply: its user agent prefix reaches the server")
  func hostSettings() async throws {
    try await withTestServer { server in
      let host = server.server.target
      try GRPCCall.setUserAgentPrefix("Foo", forHost: host)
      try GRPCCall.useInsecureConnections(forHost: host)
      let collector = Collector()
      GRPCCall(
        host: host,
        path: Self.service + "EmptyCall",
        requestsWriter: GRXWriter(value: Data()),
        channelPool: server.pool
      ).start(with: collector.writeable)
      #expect(try await collector.end() == nil)
      let agent =
        server.recorder.rpcs.last.map { Array($0.metadata[stringValues: "user-agent"]) } ?? []
      #expect(agent.first?.hasPrefix("Foo ") == true, "\(agent)")
    }
  }

  @Test(
    "a paused call holds a 64 KiB-message server stream within the flow-control bound; resumed, every message arrives"
  )
  func pausedCallIsBackPressured() async throws {
    // Uncompressed: the bound is in bytes on the wire (the Flow control article).
    try await withTestServer(compression: false) { server in
      let messages = 2000
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = (0 ..< messages).map { _ in
        var parameters = Grpc_Testing_ResponseParameters()
        parameters.size = 64 * 1024
        return parameters
      }
      var options = server.options
      options.http2TargetWindowSize = 1 << 20
      // Through a proxy that counts the bytes the server sends (FlowControlBounds.wireLead).
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      let call = GRPCCall(
        host: "127.0.0.1:\(proxy.port)",
        path: Self.service + "StreamingOutputCall",
        requestsWriter: GRXWriter(value: try request.serializedData()),
        callOptions: options,
        channelPool: server.pool
      )
      let count = LockedValue(0)
      let end = LockedValue<GRPCError??>(nil)
      call.start(
        with: GRXHandlerWriteable(
          valueHandler: { _ in
            if count.withLock({
              $0 += 1
              return $0
            }) == 1 {
              call.state = .paused
            }
          },
          completionHandler: { error in end.withLock { $0 = .some(error as? GRPCError) } }
        )
      )
      // Wait for the first message and the pause it caused, however slow the machine.
      let paused = await eventually {
        count.withLock { $0 } == 1 && call.state == .paused ? true : nil
      }
      try #require(paused == true, "the first message never arrived")
      // Then for the server to stop sending: the bytes it sent hold still for a second.
      let sent = try #require(
        await steadyValue { proxy.serverBytes },
        "the server never stopped sending"
      )
      #expect(count.withLock { $0 } == 1)
      #expect(
        sent <= FlowControlBounds.wireLead(window: 1 << 20),
        "the server sent \(sent >> 10) KiB ahead"
      )
      call.state = .started
      // 128 MiB through the proxy, on a busy machine: a generous wait.
      let closed = await eventually(upTo: 300) { end.withLock { $0 } }
      #expect(closed != nil && closed! == nil, "\(String(describing: closed))")
      #expect(count.withLock { $0 } == messages)
    }
  }

  @Test("a request header gRPC cannot send is a clear error: INVALID_ARGUMENT naming the key")
  func badRequestHeader() async throws {
    try await withTestServer { server in
      let collector = Collector()
      let call = Self.call(server, "EmptyCall", GRXWriter(value: Data()))
      call.requestHeaders.addString("value", forKey: "x key")
      call.start(with: collector.writeable)
      let end = try await collector.end()
      #expect(end?.code == .invalidArgument)
      #expect(end?.message.contains("'x key'") == true, "\(String(describing: end))")
    }
  }

  @Test("a requests writer that already finished fails the call with FAILED_PRECONDITION")
  func finishedRequestsWriter() async throws {
    try await withTestServer { server in
      let used = GRXWriter(value: Data())
      used.start(with: GRXHandlerWriteable(valueHandler: { _ in }))
      let collector = Collector()
      Self.call(server, "EmptyCall", used).start(with: collector.writeable)
      let end = try await collector.end()
      #expect(end?.code == .failedPrecondition, "\(String(describing: end))")
      #expect(
        end?.message
          == "The writer has already finished: a GRXWriter can be started once; make a new one"
      )
    }
  }
}
