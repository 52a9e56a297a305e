import Foundation
import GRPCCalls
import GRPCCallsInterceptors
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import GRPCProtoCalls
import SwiftProtobuf
import Testing

@Suite("Stub interceptor: a generated client with no server")
struct StubInterceptorTests {
  static let service = "/grpc.testing.TestService/"

  /// Stubs for the four RPC shapes of the interop service.
  static func stubs(
    unmatched: GRPCStubInterceptorFactory.Unmatched = .fail
  ) -> GRPCStubInterceptorFactory {
    var config = GRPCStubInterceptorFactory.Config.defaults
    config.unmatched = unmatched
    return GRPCStubInterceptorFactory(
      config: config,
      stubs: [
        // Unary: a typed handler.
        .unary(Self.service + "UnaryCall") { (request: Grpc_Testing_SimpleRequest) in
          Grpc_Testing_SimpleResponse.with {
            $0.username = "stub for \(request.payload.body.count) bytes"
          }
        },
        // Unary that fails.
        .reply(
          Self.service + "EmptyCall",
          with: .failure(GRPCError(code: .permissionDenied, message: "stubbed refusal"))
        ),
        // Server streaming: three messages, the second after a pause, then OK.
        .serverStreaming(Self.service + "StreamingOutputCall") {
          (request: Grpc_Testing_StreamingOutputCallRequest) in
          let sizes = request.responseParameters.map { Int($0.size) }
          return GRPCStubResponse(
            headers: ["x-stub": "yes"],
            steps: [
              .message(Self.output(sizes[0])), .pause(.milliseconds(200)),
              .message(Self.output(sizes[1])),
              .message(Self.output(sizes[2])),
            ]
          )
        },
        // Client streaming: the sum of every request's payload.
        GRPCStub(path: Self.service + "StreamingInputCall") { requests, _ in
          let total = requests.compactMap {
            ($0 as? Grpc_Testing_StreamingInputCallRequest)?.payload.body.count
          }.reduce(0, +)
          return .message(
            Grpc_Testing_StreamingInputCallResponse.with { $0.aggregatedPayloadSize = Int32(total) }
          )
        },
        // Bidirectional: one response per request, then a status with trailers.
        GRPCStub(path: Self.service + "FullDuplexCall") { requests, _ in
          let sizes = requests.compactMap {
            ($0 as? Grpc_Testing_StreamingOutputCallRequest)?.responseParameters.first?.size
          }
          return GRPCStubResponse(
            steps: sizes.map { .message(Self.output(Int($0))) },
            trailers: ["x-stub-trailer": "done"],
            error: GRPCError(code: .dataLoss, message: "scripted end")
          )
        },
      ]
    )
  }

  static func output(_ size: Int) -> Grpc_Testing_StreamingOutputCallResponse {
    .with { $0.payload.body = Data(count: size) }
  }

  static func streamRequest(_ sizes: [Int32]) -> Grpc_Testing_StreamingOutputCallRequest {
    .with { request in
      request.responseParameters = sizes.map { size in .with { $0.size = size } }
    }
  }

  @Test(
    "all four RPC shapes answered by stubs, with an error status and a paused stream; no connection opened"
  )
  func fourShapes() async throws {
    // A real server, only to prove that no call reaches it.
    try await withTestServer { server in
      let stubs = Self.stubs()
      var options = GRPCCallOptions()
      options.transportType = .insecure
      options.interceptorFactories = [stubs]
      let client = TestService(
        host: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )

      let unary = try await client.unaryCall(.with { $0.payload.body = Data(count: 7) })
      #expect(unary.username == "stub for 7 bytes")

      await #expect {
        _ = try await client.emptyCall(Grpc_Testing_Empty())
      } throws: { error in
        (error as? GRPCError)?.code == .permissionDenied
          && (error as? GRPCError)?.message == "stubbed refusal"
      }

      let sizes = try await client.streamingOutputCall(Self.streamRequest([1, 2, 3])) { responses in
        var sizes: [Int] = []
        for try await response in responses {
          sizes.append(response.payload.body.count)
        }
        return sizes
      }
      #expect(sizes == [1, 2, 3])

      let aggregate = try await client.streamingInputCall { writer in
        for size in [10, 20, 30] {
          try await writer.write(.with { $0.payload.body = Data(count: size) })
        }
      }
      #expect(aggregate.aggregatedPayloadSize == 60)

      let received = SizesBox()
      await #expect {
        try await client.fullDuplexCall { writer in
          for size: Int32 in [4, 5] {
            try await writer.write(Self.streamRequest([size]))
          }
        } body: { responses in
          for try await response in responses {
            received.append(response.payload.body.count)
          }
        }
      } throws: { error in
        (error as? GRPCError)?.code == .dataLoss
      }
      #expect(received.all == [4, 5])

      #expect(
        stubs.requests.map(\.path)
          == [
            "UnaryCall", "EmptyCall", "StreamingOutputCall", "StreamingInputCall", "FullDuplexCall",
          ].map { Self.service + $0 }
      )
      #expect(stubs.requests.map(\.messages.count) == [1, 1, 1, 3, 2])
      #expect(stubs.requests.allSatisfy { $0.stubbed })
      #expect(server.recorder.acceptedConnections == 0)
      #expect(server.recorder.rpcs.isEmpty)
    }
  }

  @Test("an unmatched call fails with UNIMPLEMENTED by default, or passes through to the server")
  func unmatched() async throws {
    try await withTestServer { server in
      var options = GRPCCallOptions()
      options.transportType = .insecure
      options.interceptorFactories = [Self.stubs()]
      let failing = TestService(
        host: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      await #expect {
        _ = try await failing.cacheableUnaryCall(Grpc_Testing_SimpleRequest())
      } throws: { error in
        (error as? GRPCError)?.code == .unimplemented
          && (error as? GRPCError)?.message.contains(
            "No stub for /grpc.testing.TestService/CacheableUnaryCall"
          ) == true
      }
      #expect(server.recorder.acceptedConnections == 0)

      let passing = Self.stubs(unmatched: .passThrough)
      options.interceptorFactories = [passing]
      let client = TestService(
        host: server.server.target,
        callOptions: options,
        channelPool: server.pool
      )
      _ = try await client.cacheableUnaryCall(Grpc_Testing_SimpleRequest())
      #expect(server.recorder.rpcs.map(\.method) == ["grpc.testing.TestService/CacheableUnaryCall"])
      #expect(passing.requests.map(\.stubbed) == [false])
    }
  }

  @Test("a stub of the wrong request type fails the call with INTERNAL naming both types")
  func wrongType() async throws {
    let stubs = GRPCStubInterceptorFactory(stubs: [
      .unary(Self.service + "UnaryCall") { (_: Grpc_Testing_Empty) in Grpc_Testing_SimpleResponse()
      }
    ])
    var options = GRPCCallOptions()
    options.interceptorFactories = [stubs]
    let client = TestService(host: "stub.invalid:1", callOptions: options)
    await #expect {
      _ = try await client.unaryCall(Grpc_Testing_SimpleRequest())
    } throws: { error in
      guard let error = error as? GRPCError else { return false }
      return error.code == .internalError && error.message.contains("Grpc_Testing_Empty")
        && error.message.contains("Grpc_Testing_SimpleRequest")
    }
  }
}

/// Response sizes collected inside a `body` closure.
final class SizesBox: Sendable {
  private let sizes = LockedValue<[Int]>([])
  func append(_ size: Int) { self.sizes.withLock { $0.append(size) } }
  var all: [Int] { self.sizes.withLock { $0 } }
}
