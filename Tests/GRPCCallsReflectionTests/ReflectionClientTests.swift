import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsReflection
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

/// The reflection client against the interop server's reflection service, over a real
/// connection (grpcio's and grpc-go's services are checked by interop/check-reflection.sh).
@Suite("Reflection client")
struct ReflectionClientTests {
  static func client(_ server: TestServer, _ metadata: Metadata = [:]) -> GRPCReflectionClient {
    var options = server.options
    options.initialMetadata = metadata
    // A safety net, not the subject: the client's own default is shorter.
    options.timeout = CloseWait.seconds
    return GRPCReflectionClient(
      host: server.server.target,
      callOptions: options,
      channelPool: server.pool
    )
  }

  @Test("lists the services the server offers")
  func listServices() async throws {
    try await withTestServer { server in
      let services = try await Self.client(server).listServices()
      #expect(
        services == [
          "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
          "grpc.reflection.v1alpha.ServerReflection", "grpc.testing.TestService",
        ]
      )
    }
  }

  @Test("the file of a symbol comes with its imports, dependencies first")
  func fileContainingSymbol() async throws {
    try await withTestServer { server in
      let files = try await Self.client(server).fileDescriptors(
        containingSymbol: "grpc.testing.TestService.UnaryCall"
      )
      let names = files.map(\.name)
      #expect(
        Set(names) == [
          "src/proto/grpc/testing/test.proto", "src/proto/grpc/testing/empty.proto",
          "src/proto/grpc/testing/messages.proto",
        ]
      )
      #expect(names.last == "src/proto/grpc/testing/test.proto")
      let service = files.last?.service.first
      #expect(service?.name == "TestService")
      #expect(service?.method.count == 8)
    }
  }

  @Test("a file by name, and a nested enum's file")
  func fileByName() async throws {
    try await withTestServer { server in
      let client = Self.client(server)
      let health = try await client.fileDescriptors(filename: "grpc/health/v1/health.proto")
      #expect(health.map(\.name) == ["grpc/health/v1/health.proto"])
      #expect(health.first?.service.first?.method.map(\.name) == ["Check", "List", "Watch"])
      let byEnum = try await client.fileDescriptors(
        containingSymbol: ".grpc.health.v1.HealthCheckResponse.ServingStatus"
      )
      #expect(byEnum.map(\.name) == ["grpc/health/v1/health.proto"])
    }
  }

  @Test("a server that serves only v1alpha is asked over v1alpha")
  func fallsBackToV1Alpha() async throws {
    try await withTestServer { server in
      let client = Self.client(server, [InteropReflectionService.v1AlphaOnlyKey: "1"])
      let services = try await client.listServices()
      #expect(services.contains("grpc.testing.TestService"))
      #expect(!services.contains("grpc.reflection.v1.ServerReflection"), "\(services)")
      let files = try await client.fileDescriptors(containingSymbol: "grpc.testing.SimpleRequest")
      #expect(files.map(\.name).last == "src/proto/grpc/testing/messages.proto")
    }
  }

  @Test("an unknown symbol or file is NOT_FOUND, with the server's message")
  func notFound() async throws {
    try await withTestServer { server in
      let client = Self.client(server)
      for ask in [
        { try await client.fileDescriptors(containingSymbol: "no.such.Symbol") },
        { try await client.fileDescriptors(filename: "no/such.proto") },
      ] as [@Sendable () async throws -> [Google_Protobuf_FileDescriptorProto]] {
        let error = await #expect(throws: GRPCError.self) { try await ask() }
        #expect(error?.code == .notFound)
        #expect(error?.message.contains("Unknown") == true, "\(String(describing: error))")
      }
    }
  }
}
