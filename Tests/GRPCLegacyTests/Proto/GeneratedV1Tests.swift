import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCLegacy
import Testing

/// The generated client's v1 methods (`GRPCProtoCall`) over loopback against the in-process
/// interop server.
@Suite("Generated v1 methods over loopback")
struct GeneratedV1Tests {
  @Test("every interop case passes through the v1 methods", arguments: InteropTestCase.allCases)
  func interopCase(_ testCase: InteropTestCase) async throws {
    try await withTestServer { server in
      try await server.client.run(testCase, api: .legacy)
    }
  }

  @Test("a service made without options runs v1 calls with the host's settings")
  func hostSettings() async throws {
    try await withTestServer { server in
      let host = server.server.target
      try GRPCCall.setUserAgentPrefix("Ported", forHost: host)
      try GRPCCall.useInsecureConnections(forHost: host)
      let service = TestService(host: host, channelPool: server.pool)
      let recorder = LegacyRecorder<Grpc_Testing_Empty>()
      service.emptyCall(with: Grpc_Testing_Empty(), handler: recorder.handler)
      try await recorder.expectEnd(nil)
      let agent =
        server.recorder.rpcs.last.map { Array($0.metadata[stringValues: "user-agent"]) } ?? []
      #expect(agent.first?.hasPrefix("Ported ") == true, "\(agent)")
    }
  }

  @Test("without its host's insecure setting, a v1 call to a plaintext server tries TLS and fails")
  func tlsByDefault() async throws {
    try await withTestServer { server in
      let service = TestService(host: server.server.target, channelPool: server.pool)
      let recorder = LegacyRecorder<Grpc_Testing_Empty>()
      service.emptyCall(with: Grpc_Testing_Empty(), handler: recorder.handler)
      try await recorder.expectEnd(
        .unavailable,
        message:
          "The server does not speak TLS: set transportType to .insecure to call a plaintext server"
      )
    }
  }

  @Test(
    "an interceptor that passes on a response of another type fails the v1 call with INTERNAL naming it"
  )
  func wrongResponseType() async throws {
    try await withTestServer { server in
      var options = server.options
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { BytesInsteadOfMessages(manager: $0) }
      ]
      let service = TestService(
        host: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      let recorder = LegacyRecorder<Grpc_Testing_SimpleResponse>()
      service.unaryCall(with: Grpc_Testing_SimpleRequest(), handler: recorder.handler)
      try await recorder.expectEnd(
        .internalError,
        message:
          "Received a Data as a response of a call whose responses are grpc.testing.SimpleResponse: "
          + "an interceptor passed on a message of another type"
      )
      #expect(recorder.responses.isEmpty)
    }
  }

  @Test("start() twice starts the call once; the handler is called once")
  func startTwice() async throws {
    try await withTestServer { server in
      let service = TestService(
        host: server.server.target,
        callOptions: server.options,
        channelPool: server.pool
      )
      let recorder = LegacyRecorder<Grpc_Testing_Empty>()
      let call = service.rpcToEmptyCall(with: Grpc_Testing_Empty(), handler: recorder.handler)
      call.start()
      call.start()
      try await recorder.expectEnd(nil)
      #expect(server.recorder.rpcs.count { $0.method.hasSuffix("/EmptyCall") } == 1)
    }
  }
}

/// Hands the caller each response's bytes instead of the parsed message.
private final class BytesInsteadOfMessages: GRPCInterceptor, @unchecked Sendable {
  override func didReceiveData(_ data: any Sendable) {
    super.didReceiveData(Data([1, 2, 3]))
  }
}
