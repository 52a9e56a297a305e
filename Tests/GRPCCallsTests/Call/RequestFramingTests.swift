import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCProtoCalls
import Testing

/// What a call puts on the wire, read back from the client's own bytes through a recording
/// proxy: a request whose end is known before it is written leaves with END_STREAM in the same
/// flush as its message (a peer that answers first would reset the half-open stream; Design
/// article, "Where the core needed help"). The transport writes the message's DATA frame as soon
/// as it has it and, when the half-close comes a moment later, adds an empty END_STREAM frame —
/// but it holds the flush until the half-close, so both leave together.
@Suite("Request framing on the wire")
struct RequestFramingTests {
  @Test(
    "a known request leaves with END_STREAM in the same flush as its message, on every face",
    arguments: RPCPath.allCases
  )
  func unaryDataCarriesEndStream(path: RPCPath) async throws {
    try await withFramingProxy(path: path) { server, target in
      // GRPCCall2 with the request and finish given before start.
      let (call, recorder) = try server.client(target: target).makeCall("UnaryCall")
      call.writeData(try Grpc_Testing_SimpleRequest().bytes)
      call.finish()
      call.start()
      #expect(await recorder.waitForClose()?.error == nil)

      // The generated callback face.
      let service = TestService(host: target, callOptions: server.options, channelPool: server.pool)
      let handler = ProtoCallRecorder()
      service.unaryCall(message: Grpc_Testing_SimpleRequest(), responseHandler: handler).start()
      #expect(await handler.waitForClose()?.error == nil)

      // The generated async face, unary and server streaming.
      _ = try await service.unaryCall(Grpc_Testing_SimpleRequest())
      let count = try await service.streamingOutputCall(InteropRequests.stream(count: 2, size: 8)) {
        stream in
        var count = 0
        for try await _ in stream { count += 1 }
        return count
      }
      #expect(count == 2)
      return 4
    }
  }

  @Test(
    "through two interceptors, queued or inline, the start, message and finish they pass on leave together",
    arguments: RPCPath.allCases,
    [false, true]
  )
  func throughInterceptors(path: RPCPath, inline: Bool) async throws {
    try await withFramingProxy(path: path) { server, target in
      let log = InterceptorLog()
      var options = server.options
      options.interceptorFactories = [
        CountingInterceptor.factory("A", log: log, inline: inline),
        CountingInterceptor.factory("B", log: log, inline: inline),
      ]
      let client = InteropClient(target: target, callOptions: options, channelPool: server.pool)
      let (call, recorder) = try client.makeCall("UnaryCall")
      call.writeData(try Grpc_Testing_SimpleRequest().bytes)
      call.finish()
      call.start()
      #expect(await recorder.waitForClose()?.error == nil)
      return 1
    }
  }
}

/// Runs `body` against a test server behind a proxy that records what the client sends, then
/// checks every stream's DATA: the message, then END_STREAM, all in one read of the proxy.
///
/// - Parameter body: Makes calls to the target it is given; returns how many streams it made.
func withFramingProxy(
  path: RPCPath,
  _ body: (TestServer, _ target: String) async throws -> Int
) async throws {
  try await withTestServer(path: path) { server in
    let proxy = try FaultProxy(upstreamPort: server.server.port, recordingClientBytes: true)
    defer { proxy.close() }
    let streams = try await body(server, "127.0.0.1:\(proxy.port)")
    let connections = proxy.clientConnections
    let dataStreams = connections.map {
      Dictionary(grouping: $0.frames.filter(\.isData), by: \.streamID)
    }
    #expect(dataStreams.map(\.count).reduce(0, +) == streams, "\(connections.map(\.frames))")
    for (connection, dataByStream) in zip(connections, dataStreams) {
      for (stream, data) in dataByStream {
        guard let first = data.first, let last = data.last else { continue }
        #expect(last.endsStream, "stream \(stream): \(data)")
        #expect(first.length > 0, "stream \(stream) sent no message before its end: \(data)")
        // No read ended between the message and END_STREAM: they left in one flush.
        let split = connection.readEnds.first { $0 > first.offset && $0 < last.end }
        #expect(
          split == nil,
          "stream \(stream)'s DATA frames arrived in two reads: \(data), reads end at \(connection.readEnds)"
        )
      }
    }
  }
}

extension TestServer {
  /// An interop client for `target` (a proxy in front of this server), on this server's pool.
  func client(target: String) -> InteropClient {
    InteropClient(target: target, callOptions: self.options, channelPool: self.pool)
  }
}
