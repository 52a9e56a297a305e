import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCore
import SwiftProtobuf
import Testing

/// A real interop server on 127.0.0.1:0 and a channel pool of the test's own.
struct TestServer: Sendable {
  let server: InteropServer
  let pool: GRPCChannelPool

  var recorder: InteropServerRecorder { self.server.recorder }

  /// Plaintext options, as every test against the local server needs.
  var options: GRPCCallOptions {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    return options
  }

  var client: InteropClient {
    InteropClient(target: self.server.target, callOptions: self.options, channelPool: self.pool)
  }

  /// Makes a call to a TestService method on this server.
  func call(
    _ method: String,
    service: String = "grpc.testing.TestService",
    options: GRPCCallOptions? = nil,
    recorder: CallRecorder = CallRecorder()
  ) throws -> (GRPCCall2, CallRecorder) {
    try self.client.makeCall(method, service: service, options: options, recorder: recorder)
  }

  /// Starts `method`, sends `request`, half-closes and waits for the close.
  func complete(
    _ method: String,
    _ request: some SwiftProtobuf.Message,
    options: GRPCCallOptions? = nil
  ) async throws -> (call: GRPCCall2, recorder: CallRecorder, close: CallRecorder.Close) {
    let (call, recorder) = try self.call(method, options: options)
    call.start()
    call.writeData(try request.bytes)
    call.finish()
    let close = try #require(await recorder.waitForClose())
    return (call, recorder, close)
  }
}

extension TestServer {
  /// Checks that the server's streamed responses have stopped short of `total`: the call that
  /// asked for them was ended on the client side.
  func expectStreamStopped(before total: Int) async throws {
    try await Task.sleep(for: .milliseconds(300))
    let written = self.recorder.streamedResponses
    try await Task.sleep(for: .milliseconds(300))
    #expect(self.recorder.streamedResponses == written, "the server kept streaming")
    #expect(written < total)
  }
}

/// Polls `value` until it is not `nil`, for up to `seconds`.
func eventually<T: Sendable>(upTo seconds: Double = 30, _ value: () -> T?) async -> T? {
  let deadline = ContinuousClock.now + .seconds(seconds)
  while ContinuousClock.now < deadline {
    if let value = value() { return value }
    try? await Task.sleep(for: .milliseconds(5))
  }
  return value()
}

/// Runs `body` against a fresh server and pool, then tears both down.
func withTestServer(
  poolConfig: GRPCChannelPool.Config = .defaults,
  tls: InteropServer.TLSIdentity? = nil,
  _ body: (TestServer) async throws -> Void
) async throws {
  let server = try await InteropServer.start(host: "127.0.0.1", port: 0, tls: tls)
  let pool = GRPCChannelPool(config: poolConfig)
  defer { pool.disconnectAll() }
  do {
    try await body(TestServer(server: server, pool: pool))
  } catch {
    await server.stopAndWait()
    throw error
  }
  pool.disconnectAll()
  await server.stopAndWait()
}

extension SwiftProtobuf.Message {
  var bytes: Data { get throws { try self.serializedData() } }
}

/// A UnaryCall request whose response message is exactly `responseBytes` long on the wire.
func unaryRequest(responseBytes: Int) throws -> Grpc_Testing_SimpleRequest {
  var request = Grpc_Testing_SimpleRequest()
  // The payload's framing takes at most a dozen bytes: find the body size that lands exactly.
  for body in max(0, responseBytes - 12)...responseBytes {
    var response = Grpc_Testing_SimpleResponse()
    response.payload.body = Data(count: body)
    if try response.serializedData().count == responseBytes {
      request.responseSize = Int32(body)
      return request
    }
  }
  throw InteropCaseFailure("no body size gives \(responseBytes) bytes")
}
