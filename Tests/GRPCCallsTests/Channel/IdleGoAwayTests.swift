import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// A server that closes idle connections (grpc-go's and the core's `MaxConnectionIdle`) sends a
/// GOAWAY to a connection without RPCs. The channel then goes idle and connects again only when
/// a call needs it, as gRPC core and grpc-go do (``ReconnectOnDemand``): a client that
/// reconnected at once would open a connection per idle period for nothing.
@Suite("Idle GOAWAY")
struct IdleGoAwayTests {
  /// An EmptyCall; the error it closed with, if any.
  static func emptyCall(_ client: InteropClient) async throws -> GRPCError? {
    let (call, recorder) = try client.makeCall("EmptyCall")
    call.writeData(try Grpc_Testing_Empty().bytes)
    call.finish()
    call.start()
    return await recorder.waitForClose()?.error
  }

  /// An EmptyCall on a new connection, tried up to three times: on a machine busy enough that
  /// the call reaches the server after it called the new connection idle, the call races the
  /// idle GOAWAY, which is another matter than this test's. The last error, if all failed.
  static func emptyCallOnNewConnection(_ client: InteropClient) async throws -> GRPCError? {
    var error: GRPCError?
    for _ in 0 ..< 3 {
      error = try await Self.emptyCall(client)
      if error == nil { return nil }
    }
    return error
  }

  @Test(
    "after the server's idle GOAWAY the channel connects again only for a call",
    arguments: RPCPath.allCases
  )
  func noReconnectWithoutACall(path: RPCPath) async throws {
    // Long enough that a busy machine's first call (under ThreadSanitizer too) reaches the
    // server before it calls the connection idle: a call that races the idle GOAWAY is
    // another matter, not this test's.
    try await withTestServer(path: path, maxConnectionIdle: .seconds(8)) { server in
      let client = InteropClient(
        target: server.server.target,
        callOptions: server.options,
        channelPool: server.pool
      )
      let first = try await Self.emptyCallOnNewConnection(client)
      #expect(first == nil, "\(String(describing: first))")

      // The server's GOAWAY closes the idle connection.
      let closed = await eventually { server.recorder.openConnections == 0 ? true : nil }
      #expect(
        closed == true,
        "the server did not close the idle connection, or the channel kept reconnecting"
      )
      let idle = server.recorder.acceptedConnections

      // Several idle periods with no call: a channel that reconnected by itself would have
      // done so by now (on a slow machine it may be later; the test then passes without
      // having seen it, it never fails for slowness).
      try await Task.sleep(for: .seconds(17))
      #expect(
        server.recorder.acceptedConnections == idle,
        "the channel reconnected with no call waiting"
      )

      // A call connects again and succeeds.
      let second = try await Self.emptyCallOnNewConnection(client)
      #expect(second == nil, "\(String(describing: second))")
      #expect(server.recorder.acceptedConnections > idle)
    }
  }
}
