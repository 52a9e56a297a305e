import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Testing

@testable import GRPCCalls

/// A connection the pool shut down while a call was starting it. Nothing listens at the
/// target, and nothing needs to: the transport never connects.
@Suite("A connection shut down before it ran")
struct ShutDownBeforeRunningTests {
  @Test("it still runs, takes its shutdown and fails the stream queued on it with UNAVAILABLE")
  func failsQueuedStream() async throws {
    let transport = try HTTP2ClientTransport.Posix(
      target: .ipv4(address: "127.0.0.1", port: 1),
      transportSecurity: .plaintext
    )
    let client = TransportChannelClient(transport: transport)
    client.beginGracefulShutdown()
    let stream = Task { () -> RPCError? in
      do {
        try await transport.withStream(
          descriptor: MethodDescriptor(fullyQualifiedService: "test.Service", method: "Method"),
          options: .defaults
        ) { _, _ in }
        return nil
      } catch {
        return error as? RPCError
      }
    }
    // Returns once the transport took its shutdown; the client alone refused to run.
    try await client.runConnections()
    let error = await stream.value
    #expect(error?.code == .unavailable, "\(String(describing: error))")
  }
}
