import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCLegacy
import SwiftProtobuf
import Testing

/// A host's settings (`GRPCHost`) reach the wire of v1 calls made without call options, and
/// only theirs.
@Suite("v1 calls with per-host settings over loopback")
struct GRPCCallHostSettingsTests {
  static let mebibyte = 1024 * 1024

  /// A UnaryCall to `host` without call options, whose response is `responseBytes` long.
  static func unary(_ server: TestServer, responseBytes: Int) async throws -> (Data?, GRPCError?) {
    let call = GRPCCall(
      host: server.server.target,
      path: "/grpc.testing.TestService/UnaryCall",
      requestsWriter: GRXWriter(
        value: try unaryRequest(responseBytes: responseBytes).serializedData()
      ),
      channelPool: server.pool
    )
    return await withCheckedContinuation { continuation in
      call.start(
        with: GRXHandlerWriteable.unaryHandler { (response: Data?, error: GRPCError?) in
          continuation.resume(returning: (response, error))
        }
      )
    }
  }

  @Test(
    "the host's response size limit: 4 MiB + 1 fails with 8 naming both sizes; a raised limit accepts it"
  )
  func responseSizeLimit() async throws {
    try await withTestServer(compression: false) { server in
      let host = server.server.target
      try GRPCCall.useInsecureConnections(forHost: host)
      let (_, error) = try await Self.unary(server, responseBytes: 4 * Self.mebibyte + 1)
      #expect(error?.code == .resourceExhausted)
      #expect(error?.message == "Received message larger than max (4194305 vs. 4194304)")
      try GRPCCall.setResponseSizeLimit(6 * Self.mebibyte, forHost: host)
      let (response, raisedError) = try await Self.unary(
        server,
        responseBytes: 4 * Self.mebibyte + 1
      )
      #expect(raisedError == nil)
      #expect(response?.count == 4 * Self.mebibyte + 1)
    }
  }

  @Test("explicit call options ignore the host's settings")
  func explicitOptionsWin() async throws {
    try await withTestServer { server in
      let host = server.server.target
      try GRPCCall.setUserAgentPrefix("HostOnly", forHost: host)
      let call = GRPCCall(
        host: host,
        path: "/grpc.testing.TestService/EmptyCall",
        requestsWriter: GRXWriter(value: Data()),
        callOptions: server.options,
        channelPool: server.pool
      )
      let error = await withCheckedContinuation { continuation in
        call.start(
          with: GRXHandlerWriteable.unaryHandler { (_: Data?, error: GRPCError?) in
            continuation.resume(returning: error)
          }
        )
      }
      #expect(error == nil)
      let agent =
        server.recorder.rpcs.last.map { Array($0.metadata[stringValues: "user-agent"]) } ?? []
      #expect(agent.first?.hasPrefix("HostOnly") == false, "\(agent)")
    }
  }
}
