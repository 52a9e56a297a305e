import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCore
import SwiftProtobuf
import Testing

@Suite("Back-pressure over HTTP/2", .serialized)
struct BackPressureTests {
  static let messageSize = 64 * 1024
  /// 128 MiB: far more than the bounds below, so a client that read ahead without limit, or a
  /// server that was not held back, fails them by a wide margin.
  static let messages = 2000
  static let window = 1 << 20

  /// The documented bound (README, "Flow control"; `GRPCCallOptions.http2TargetWindowSize`):
  /// at a 1 MiB window, a server in the same process completes at most 24 MiB of writes ahead
  /// of a reader with no demand. The client reads ahead about two windows; the rest is the
  /// in-process grpc-swift-2 server's own send buffering (measured up to 16 MiB).
  static let documentedBound = 24 << 20
  /// Process memory that is not stream data: allocator slack, the other suites running beside
  /// this one in the test process.
  static let memorySlack = 32 << 20

  @Test("a server streaming to a reader with no demand is held back; then every message arrives")
  func serverIsHeldBack() async throws {
    try await withTestServer { server in
      var options = server.options
      options.enableFlowControl = true
      options.http2TargetWindowSize = Self.window
      let (call, recorder) = try server.call("StreamingOutputCall", options: options)
      let baseline = ProcessMemory.residentBytes()
      call.start()
      call.writeData(
        try FlowControlTests.stream(count: Self.messages, size: Int32(Self.messageSize)).bytes
      )
      call.finish()

      // Without back-pressure the whole stream is written within a second; with it, the server
      // stops once the window and the transports' buffers are full, and stays there.
      try await Task.sleep(for: .seconds(2))
      let held = server.recorder.streamedResponses
      let grown = ProcessMemory.residentBytes() - baseline
      try await Task.sleep(for: .seconds(1))
      #expect(server.recorder.streamedResponses == held, "the server kept writing: \(held) → \(server.recorder.streamedResponses)")
      #expect(held * Self.messageSize <= Self.documentedBound, "the server wrote \(held) messages ahead")
      #expect(grown <= Self.documentedBound + Self.memorySlack, "the process grew by \(grown >> 20) MiB")
      #expect(recorder.messages.isEmpty)

      call.receiveNextMessages(Self.messages)
      #expect(await recorder.waitForClose(upTo: 60)?.error == nil)
      #expect(recorder.messages.count == Self.messages)
      for message in recorder.messages {
        let response = try Grpc_Testing_StreamingOutputCallResponse(serializedBytes: message)
        #expect(response.payload.body == Data(count: Self.messageSize))
      }
      #expect(server.recorder.streamedResponses == Self.messages)
      print("back-pressure: the server wrote \(held) messages ahead; the process grew by \(grown >> 20) MiB")
    }
  }
}

enum ProcessMemory {
  /// The process's resident set size now, from /proc/self/statm.
  static func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
      let pages = text.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
    else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }
}
