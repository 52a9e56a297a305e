import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import Testing

/// A cancelled call is a reset on the wire, never an end: RST_STREAM(CANCEL) and no END_STREAM
/// before it, so the server's handler sees a cancellation and not a complete request stream
/// (gRPC's HTTP/2 protocol; grpc-go and gRPC core clients do the same). Read back from the
/// client's own bytes through a recording proxy, and from the server's own record of how the
/// request stream ended. `grpc-calls cancellation` runs the same probe against grpcio and
/// grpc-go (interop/run.sh).
@Suite("Cancellation on the wire")
struct CancellationOnTheWireTests {
  @Test(
    "every kind of cancel (call, task, deadline, v1, interceptor) resets the stream with CANCEL and no END_STREAM",
    arguments: CancellationProbe.Trigger.allCases,
    CancellationProbe.methods
  )
  func resetNotEnd(trigger: CancellationProbe.Trigger, method: String) async throws {
    try await withTestServer { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port, recordingClientBytes: true)
      defer { proxy.close() }
      let probe = CancellationProbe(trigger: trigger, method: method)
      let recorder = server.recorder
      let error = try await probe.run(
        target: "127.0.0.1:\(proxy.port)",
        options: server.options,
        pool: server.pool
      ) {
        // The handler is reading the request stream: the cancel can only end it one way.
        _ = await eventually { recorder.readRequest(testID: probe.testID) ? true : nil }
      }
      // The server's record comes once its handler has seen the cancel. A deadline may pass on
      // a busy machine before the handler read anything: then only the wire is checked.
      let read = recorder.readRequest(testID: probe.testID)
      #expect(read || trigger == .deadline, "the server's handler never read the request")
      let end =
        read ? await eventually { recorder.requestStreamEnd(testID: probe.testID) } : "cancelled"
      let problems = probe.problems(error: error, frames: proxy.clientFrames, serverOutcome: end)
      #expect(problems.isEmpty, "\(problems.joined(separator: "; "))")
    }
  }
}
