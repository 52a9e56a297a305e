import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
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

  /// The documented bounds (the Flow control article; `GRPCCallOptions.http2TargetWindowSize`).
  static let clientGrowth = FlowControlBounds.clientGrowth
  /// The client process's growth that is not stream data: its connection, allocator slack.
  static let memorySlack = 16 << 20

  /// The client runs as a separate `grpc-calls hold-stream` process, so its memory is measured
  /// alone; a proxy counts what the server sends.
  @Test("a server streaming to a reader with no demand is held back; then every message arrives")
  func serverIsHeldBack() async throws {
    // Uncompressed: the bounds are in bytes on the wire, and zero-filled payloads compressed
    // ~1000:1 would let the whole stream through a 1 MiB window (the Flow control article).
    try await withTestServer(compression: false) { server in
      // Through a proxy that counts what the server puts on the wire: that is what flow control
      // holds back. How far the server's writer gets ahead of the wire is up to grpc-swift and
      // the scheduler (see FlowControlBounds.wireLead).
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      let client = try ToolProcess([
        "hold-stream", "--target", "127.0.0.1:\(proxy.port)", "--messages", "\(Self.messages)",
        "--size", "\(Self.messageSize)", "--window", "\(Self.window)", "--hold", "2",
      ])
      // Without back-pressure the whole stream is sent within a second; with it, the server
      // stops sending once the windows are used up, and stays there.
      _ = try await client.line(startingWith: "holding")
      let sent = try #require(await steadyValue { proxy.serverBytes }, "the server kept sending")
      let written = server.recorder.streamedResponses
      client.send("measure")
      let held = try await client.line(startingWith: "held")
      #expect(
        sent <= FlowControlBounds.wireLead(window: Self.window),
        "the server sent \(sent >> 10) KiB ahead"
      )
      let grown = try #require(held.field("rss-growth"))
      #expect(
        grown <= Self.clientGrowth + Self.memorySlack,
        "the client grew by \(grown >> 20) MiB"
      )

      client.send("go")
      // 128 MiB through the proxy.
      let done = try await client.line(startingWith: "done", upTo: 300)
      // A non-zero exit after "done" quotes what the tool wrote (a sanitizer report, an
      // assertion): under ThreadSanitizer in CI on 2026-11-26 it exited non-zero after a clean
      // "done", and the output was not kept.
      #expect(try await client.waitForExit() == 0, "\(done); output: \(client.outputText)")
      #expect(done.field("received") == Self.messages, "\(done)")
      #expect(done.field("intact") == Self.messages, "\(done)")
      #expect(done.hasSuffix("error=none"), "\(done)")
      #expect(server.recorder.streamedResponses == Self.messages)
      print(
        "back-pressure: the server sent \(sent >> 10) KiB ahead (its writer had written \(written) messages); the client grew by \(grown >> 20) MiB"
      )
    }
  }

  /// What grpc-swift-nio-transport's debug assertion in `ClientConnectionHandler` says (see
  /// `manyStreamsHeld`).
  static let upstreamStreamCloseAssertion = "it wasn't open"

  /// Records the upstream assertion, which ended the tool, as a known issue.
  ///
  /// The cancels reset 1,000 streams at once. In a debug build that can trip an assertion in
  /// grpc-swift-nio-transport's stream bookkeeping, which ends the tool (the Reliability article):
  /// 2 of 23 full runs on 2026-11-26, and once in a trial that spread the streams over 8
  /// connections (so it is not the server's reset limit). It may also end the tool after every
  /// call has closed, while the streams are torn down: one run that day exited non-zero after
  /// "done" (its output was not kept; it is quoted now). Release builds compile it out. What the
  /// test checks of grpc-calls before the cancel (the server held back, the client's memory)
  /// passed by then.
  static func recordUpstreamAssertion(_ output: String) {
    withKnownIssue("grpc-swift-nio-transport 2.9.2 debug assertion") {
      Issue.record("the tool ended on the upstream assertion: \(output.suffix(2000))")
    }
  }

  /// A flow-controlled upload that waits for a stream slot (the server's
  /// MAX_CONCURRENT_STREAMS reached on the only connection) is held back by the transport's
  /// writer, as once its stream is open: only what fits its stream's outbound buffer is
  /// acknowledged (`didWriteData`), where a call that buffered its writes without bound would
  /// see all of them acknowledged. Once the slot frees, every byte arrives.
  @Test("an upload waiting for a stream slot is held back; once the slot frees, every byte arrives")
  func uploadWaitingForSlotIsHeldBack() async throws {
    let messages = 64
    let size = 16 * 1024
    try await withTestServer(compression: false, maxConcurrentStreams: 1) { server in
      var options = server.options
      options.enableFlowControl = true
      let (holder, holderRecorder) = try await Self.takeTheOnlySlot(server, options: options)

      let (upload, uploadRecorder) = try server.call("StreamingInputCall", options: options)
      upload.start()
      var request = Grpc_Testing_StreamingInputCallRequest()
      request.payload.body = Data(count: size)
      let bytes = try request.bytes
      // As L49 has an application write: each message once the one before it was accepted.
      let writer = Task {
        for written in 0 ..< messages {
          if written > 0 {
            guard await uploadRecorder.wait(until: { $0.writeCount >= written }) else { return }
          }
          upload.writeData(bytes)
        }
        upload.finish()
      }
      let acknowledged = try #require(
        await steadyValue { uploadRecorder.writeCount },
        "the upload's writes kept being acknowledged while it waited for a slot"
      )
      #expect(
        acknowledged <= Self.waitingUploadAcknowledged,
        "\(acknowledged) of \(messages) writes were acknowledged while the call waited for a slot"
      )
      #expect(server.recorder.rpcs.count == 1, "the upload started while the slot was taken")

      holder.finish()
      #expect(await holderRecorder.waitForClose()?.error == nil)
      await writer.value
      upload.receiveNextMessages(1)
      let close = await uploadRecorder.waitForClose()
      #expect(close != nil && close?.error == nil, "\(String(describing: close))")
      #expect(uploadRecorder.writeCount == messages)
      let response = try Grpc_Testing_StreamingInputCallResponse(
        serializedBytes: try #require(uploadRecorder.messages.first)
      )
      #expect(response.aggregatedPayloadSize == Int32(messages * size))
      print(
        "back-pressure, upload waiting for a slot: \(acknowledged) of \(messages) writes acknowledged while it waited"
      )
    }
  }

  /// An upload held back while it waits for a slot, refused when its connection begins to close
  /// (the server's graceful shutdown), closes: its writer, stopped by the transport, does not
  /// keep the call open.
  @Test("an upload held back while it waits for a slot closes when the connection closes first")
  func heldUploadClosesWhenRefused() async throws {
    try await withTestServer(compression: false, maxConcurrentStreams: 1) { server in
      var options = server.options
      options.enableFlowControl = true
      let (holder, holderRecorder) = try await Self.takeTheOnlySlot(server, options: options)

      let (upload, uploadRecorder) = try server.call("StreamingInputCall", options: options)
      upload.start()
      var request = Grpc_Testing_StreamingInputCallRequest()
      request.payload.body = Data(count: 16 * 1024)
      // Two messages: the first fills the stream's outbound buffer, the second waits for it.
      upload.writeData(try request.bytes)
      #expect(await uploadRecorder.wait { $0.writeCount == 1 })
      upload.writeData(try request.bytes)
      #expect(await steadyValue { uploadRecorder.writeCount } == 1)

      await Self.expectUploadCloses(
        uploadRecorder,
        whenStopping: server,
        holder: holder,
        holderRecorder
      )
    }
  }

  /// The same with a retry policy, which grpc-swift-2's retry executor runs: it tries the
  /// refused RPC again, cannot open the retry's stream (the server no longer takes
  /// connections), and returns without cancelling the request producer, which waits for the
  /// application's next request, or the deadline's sleep (``TransportStreamFailure``). The
  /// application neither writes again nor finishes: the call closes all the same, at once and
  /// not at its deadline.
  @Test(
    "an upload with a retry policy, refused while it waits for a slot, closes UNAVAILABLE although the application has not finished",
    arguments: [0, 60] as [TimeInterval]
  )
  func retriedUploadClosesWhenRefused(timeout: TimeInterval) async throws {
    try await withTestServer(compression: false, maxConcurrentStreams: 1) { server in
      var options = server.options
      options.enableFlowControl = true
      let (holder, holderRecorder) = try await Self.takeTheOnlySlot(server, options: options)

      options.executionPolicy = .retry(GRPCRetryPolicy(maxAttempts: 2, initialBackoff: 0.01))
      options.timeout = timeout
      let (upload, uploadRecorder) = try server.call("StreamingInputCall", options: options)
      upload.start()
      var request = Grpc_Testing_StreamingInputCallRequest()
      request.payload.body = Data(count: 16)
      upload.writeData(try request.bytes)
      #expect(await uploadRecorder.wait { $0.writeCount == 1 })

      await Self.expectUploadCloses(
        uploadRecorder,
        whenStopping: server,
        holder: holder,
        holderRecorder
      )
    }
  }

  /// Stops `server` gracefully, and expects the waiting upload to close `UNAVAILABLE` and the
  /// holder of the only slot, once it finishes, to close without error.
  static func expectUploadCloses(
    _ uploadRecorder: CallRecorder,
    whenStopping server: TestServer,
    holder: GRPCCall2,
    _ holderRecorder: CallRecorder
  ) async {
    server.server.stop()
    let close = await uploadRecorder.waitForClose()
    #expect(close != nil, "the upload did not close after its connection began to close")
    #expect(close?.error?.code == .unavailable, "\(String(describing: close))")
    holder.finish()
    #expect(await holderRecorder.waitForClose()?.error == nil)
  }

  /// Starts a call that takes the connection's only stream slot and keeps it until it finishes:
  /// it returns once the server answered it.
  static func takeTheOnlySlot(
    _ server: TestServer,
    options: GRPCCallOptions
  ) async throws -> (GRPCCall2, CallRecorder) {
    let (holder, recorder) = try server.call("FullDuplexCall", options: options)
    holder.start()
    holder.receiveNextMessages(1)
    var ping = Grpc_Testing_StreamingOutputCallRequest()
    ping.responseParameters = [InteropRequests.parameters(size: 8)]
    holder.writeData(try ping.bytes)
    #expect(await recorder.wait { $0.messages.count == 1 }, "the first call got no answer")
    return (holder, recorder)
  }

  /// The writes of 16 KiB a waiting upload may have acknowledged: the first, which fills its
  /// stream's outbound buffer (swift-nio-http2's 8 KiB high watermark), and the few the
  /// transport's writer accepts before it learns that the stream is no longer writable.
  static let waitingUploadAcknowledged = 8

  /// 1,000 streams on one channel (64 KiB windows, 1 MiB asked of each: 1 GiB), none given
  /// demand. Each stream may hold what the transport reads ahead, about two windows, and one
  /// undelivered message in grpc-calls; each call costs about 40 KiB besides (measured): the
  /// client's growth is bound by streams × (2 windows + 1 message + 48 KiB) + 32 MiB (the Flow
  /// control article). The calls are then cancelled, not read (reading 1 GiB in a debug build
  /// takes minutes; the test above reads its stream to the end).
  @Test(
    "1,000 flow-controlled server streams held on one channel: client memory within the bound; each cancelled call closes once"
  )
  func manyStreamsHeld() async throws {
    let streams = 1000
    let messages = 16
    let size = 64 * 1024
    let window = 64 * 1024
    try await withTestServer(compression: false) { server in
      let proxy = try FaultProxy(upstreamPort: server.server.port)
      defer { proxy.close() }
      let client = try ToolProcess([
        "hold-stream", "--target", "127.0.0.1:\(proxy.port)", "--streams", "\(streams)",
        "--messages", "\(messages)", "--size", "\(size)", "--window", "\(window)", "--hold", "1",
        "--cancel",
      ])
      _ = try await client.line(startingWith: "holding", upTo: 300)
      let sent = try #require(
        await steadyValue(upTo: 300) { proxy.serverBytes },
        "the server kept sending"
      )
      let written = server.recorder.streamedResponses
      #expect(
        sent <= streams * FlowControlBounds.wireLead(window: window),
        "the server sent \(sent >> 20) MiB of \((streams * messages * size) >> 20) MiB"
      )
      client.send("measure")
      let held = try await client.line(startingWith: "held")
      let grown = try #require(held.field("rss-growth"))
      let bound = FlowControlBounds.manyStreamsClientGrowth(
        streams: streams,
        window: window,
        messageSize: size
      )
      #expect(grown <= bound, "the client grew by \(grown >> 20) MiB (bound \(bound >> 20) MiB)")

      client.send("cancel")
      let done: String
      do {
        done = try await client.line(startingWith: "done", upTo: 300)
      } catch let failure as ToolFailure
        where failure.description.contains(Self.upstreamStreamCloseAssertion)
      {
        Self.recordUpstreamAssertion(failure.description)
        return
      }
      #expect(done.field("cancelled") == streams, "\(done)")
      let status = try await client.waitForExit()
      if status != 0, client.outputText.contains(Self.upstreamStreamCloseAssertion) {
        // The same assertion, as the streams' teardown finished after every call had closed.
        Self.recordUpstreamAssertion(client.outputText)
        return
      }
      #expect(status == 0, "\(done); output: \(client.outputText)")
      print(
        "back-pressure, \(streams) streams: the server sent \(sent >> 20) MiB of \((streams * messages * size) >> 20) MiB (its writers had written \(written) of \(streams * messages) messages); the client grew by \(grown >> 20) MiB (bound \(bound >> 20) MiB)"
      )
    }
  }
}
