import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

@testable import GRPCProtoCalls

/// The async faces free their call and its bridge once the call closed: no cycle survives.
@Suite("async call lifetimes")
struct AsyncLifetimeTests {
  @Test(
    "unary, unary with metadata, server streaming and bidirectional calls free their call and bridge"
  )
  func freedAfterClose() async throws {
    try await withTestServer { server in
      let service = ObservedService(
        host: server.server.target,
        callOptions: server.options,
        channelPool: server.pool
      )
      _ = try await service.unaryResponse(
        method: "UnaryCall",
        request: Grpc_Testing_SimpleRequest(),
        responseType: Grpc_Testing_SimpleResponse.self
      )
      _ = try await service.unary(
        method: "UnaryCall",
        request: Grpc_Testing_SimpleRequest(),
        responseType: Grpc_Testing_SimpleResponse.self
      )
      let streamed = try await service.serverStreaming(
        method: "StreamingOutputCall",
        request: InteropRequests.stream(count: 3, size: 8),
        responseType: Grpc_Testing_StreamingOutputCallResponse.self
      ) { stream in
        var count = 0
        for try await _ in stream { count += 1 }
        return count
      }
      #expect(streamed == 3)
      let echoed = try await service.bidirectionalStreaming(
        method: "FullDuplexCall",
        requestType: Grpc_Testing_StreamingOutputCallRequest.self,
        responseType: Grpc_Testing_StreamingOutputCallResponse.self,
        requests: { writer in try await writer.write(InteropRequests.stream(count: 1, size: 8)) }
      ) { stream in
        var count = 0
        for try await _ in stream { count += 1 }
        return count
      }
      #expect(echoed == 1)
      #expect(service.made.count == 4)
      let freed = await eventually { service.made.liveCount == 0 ? true : nil }
      #expect(freed == true, "\(service.made.liveCount) of the calls and bridges are still alive")
    }
  }

  @Test("a unary call gives its headers and trailers with the message")
  func unaryWithMetadata() async throws {
    try await withTestServer { server in
      let service = ObservedService(
        host: server.server.target,
        callOptions: server.options,
        channelPool: server.pool
      )
      var options = server.options
      options.initialMetadata.addString("echoed-value", forKey: "x-grpc-test-echo-initial")
      options.initialMetadata.addBinary([0xab, 0xcd], forKey: "x-grpc-test-echo-trailing-bin")
      let response = try await service.unaryResponse(
        method: "UnaryCall",
        request: Grpc_Testing_SimpleRequest(),
        responseType: Grpc_Testing_SimpleResponse.self,
        callOptions: options
      )
      #expect(
        Array(response.metadata[stringValues: "x-grpc-test-echo-initial"]) == ["echoed-value"]
      )
      #expect(
        Array(response.trailers[binaryValues: "x-grpc-test-echo-trailing-bin"]) == [[0xab, 0xcd]]
      )
    }
  }
}

/// A service that keeps weak references to every call it makes and to its handler.
final class ObservedService: GRPCProtoService, @unchecked Sendable {
  // @unchecked: `made` is Sendable; the rest are the base class's constants.
  let made = WeakObjects()

  init(host: String, callOptions: GRPCCallOptions, channelPool: GRPCChannelPool) {
    super.init(
      host: host,
      packageName: "grpc.testing",
      serviceName: "TestService",
      callOptions: callOptions,
      channelPool: channelPool
    )
  }

  override func makeCall<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
    _ method: String,
    _ request: Request.Type,
    _ response: Response.Type,
    _ handler: any GRPCResponseHandler,
    _ callOptions: GRPCCallOptions?,
    _ safety: GRPCCallSafety,
    deliveringInline: Bool = false
  ) -> GRPCCall2 {
    let call = super.makeCall(
      method,
      request,
      response,
      handler,
      callOptions,
      safety,
      deliveringInline: deliveringInline
    )
    self.made.add(call, handler as AnyObject)
    return call
  }
}

/// Weak references to pairs of objects.
final class WeakObjects: Sendable {
  // @unchecked: only ever compared with nil.
  private struct Weak: @unchecked Sendable {
    weak var object: AnyObject?
  }

  private let objects = LockedValue<[Weak]>([])

  func add(_ first: AnyObject, _ second: AnyObject) {
    let pair = [Weak(object: first), Weak(object: second)]
    self.objects.withLock { $0 += pair }
  }

  /// How many pairs were added.
  var count: Int { self.objects.withLock { $0.count / 2 } }

  /// How many of the objects are still alive.
  var liveCount: Int { self.objects.withLock { $0.count { $0.object != nil } } }
}
