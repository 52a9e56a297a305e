import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCore
import SwiftProtobuf
import Testing

@Suite("Back-pressure over HTTP/2", .serialized)
struct BackPressureTests {
  static let messageSize = 64 * 1024
  static let messages = 1000

  /// A 1 MiB window: measured, the in-process server's lead stays at 40–250 messages. At the
  /// default 8 MiB window the server's completed-write count is no bound (runs reached 986 of
  /// 1,000): NIOHTTP2 keeps the server's stream writable while the client's window is closed,
  /// so the server buffers on its own side. The client's memory stays bounded (bench
  /// `memory-backpressure`, server out of process); asserting that in a test needs the server
  /// out of this process.
  @Test(
    "a server streaming to a reader with no demand is held back; then every message arrives",
    arguments: [1 << 20]
  )
  func serverIsHeldBack(window: Int) async throws {
    try await withTestServer { server in
      var options = server.options
      options.enableFlowControl = true
      options.http2TargetWindowSize = window
      let (call, recorder) = try server.call("StreamingOutputCall", options: options)
      call.start()
      call.writeData(
        try FlowControlTests.stream(count: Self.messages, size: Int32(Self.messageSize)).bytes
      )
      call.finish()

      // Without back-pressure the whole 64 MiB stream is written within milliseconds; with it,
      // the server stops once the window and the transport's buffers are full, and stays there.
      try await Task.sleep(for: .seconds(2))
      let held = server.recorder.streamedResponses
      try await Task.sleep(for: .seconds(1))
      #expect(server.recorder.streamedResponses == held, "the server kept writing: \(held) → \(server.recorder.streamedResponses)")
      #expect(held < Self.messages / 2, "the server wrote \(held) of \(Self.messages) messages")
      #expect(recorder.messages.isEmpty)

      call.receiveNextMessages(Self.messages)
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.messages.count == Self.messages)
      for message in recorder.messages {
        let response = try Grpc_Testing_StreamingOutputCallResponse(serializedBytes: message)
        #expect(response.payload.body == Data(count: Self.messageSize))
      }
      #expect(server.recorder.streamedResponses == Self.messages)
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
