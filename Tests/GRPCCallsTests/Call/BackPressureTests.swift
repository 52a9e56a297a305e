import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import Testing

@Suite("Back-pressure over HTTP/2", .serialized)
struct BackPressureTests {
  static let messageSize = 64 * 1024
  /// 128 MiB: far more than the bounds below, so a client that read ahead without limit, or a
  /// server that was not held back, fails them by a wide margin.
  static let messages = 2000
  static let window = 1 << 20

  /// The documented bounds (README, "Flow control"; `GRPCCallOptions.http2TargetWindowSize`).
  static let serverLead = FlowControlBounds.inProcessServerLead
  static let clientGrowth = FlowControlBounds.clientGrowth
  /// The client process's growth that is not stream data: its connection, allocator slack.
  static let memorySlack = 16 << 20

  /// The client runs as a separate `grpc-calls hold-stream` process, so its memory is measured
  /// alone; the server here counts its completed writes.
  @Test("a server streaming to a reader with no demand is held back; then every message arrives")
  func serverIsHeldBack() async throws {
    // Uncompressed: the bounds are in bytes on the wire, and zero-filled payloads compressed
    // ~1000:1 would let the whole stream through a 1 MiB window (README, "Flow control").
    try await withTestServer(compression: false) { server in
      let client = try ToolProcess([
        "hold-stream", "--target", server.server.target, "--messages", "\(Self.messages)",
        "--size", "\(Self.messageSize)", "--window", "\(Self.window)", "--hold", "2",
      ])
      // Without back-pressure the whole stream is written within a second; with it, the server
      // stops once the window and the transports' buffers are full, and stays there.
      let held = try await client.line(startingWith: "held")
      let written = try #require(await steadyValue { server.recorder.streamedResponses }, "the server kept writing")
      #expect(written * Self.messageSize <= Self.serverLead, "the server wrote \(written) messages ahead")
      let grown = try #require(held.field("rss-growth"))
      #expect(grown <= Self.clientGrowth + Self.memorySlack, "the client grew by \(grown >> 20) MiB")

      client.send("go")
      let done = try await client.line(startingWith: "done")
      #expect(try await client.waitForExit() == 0, "\(done)")
      #expect(done.field("received") == Self.messages, "\(done)")
      #expect(done.field("intact") == Self.messages, "\(done)")
      #expect(done.hasSuffix("error=none"), "\(done)")
      #expect(server.recorder.streamedResponses == Self.messages)
      print("back-pressure: the server wrote \(written) messages ahead; the client grew by \(grown >> 20) MiB")
    }
  }
}
