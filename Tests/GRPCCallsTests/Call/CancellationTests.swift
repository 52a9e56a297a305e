import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@Suite("Cancellation")
struct CancellationTests {
  @Test("cancel right after start: no message, code 1 \"Canceled by app\", nil trailers")
  func cancelAfterStart() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("FullDuplexCall")
      call.start()
      call.cancel()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)
      #expect(close.error?.message == "Canceled by app")
      #expect(close.trailers == nil)
      #expect(recorder.messages.isEmpty)
      try await Self.expectNothingMoreArrives(recorder)
    }
  }

  @Test("cancel inside the first message callback: exactly 1 message, then code 1")
  func cancelInFirstMessage() async throws {
    try await withTestServer { server in
      let box = CallBox()
      let recorder = CallRecorder { _, index in
        guard index == 0 else { return }
        // Hold the handler's queue so the rest of the stream and its close queue up behind
        // this callback: cancel must drop all of them.
        Thread.sleep(forTimeInterval: 0.3)
        box.call?.cancel()
      }
      let (call, _) = try server.call("StreamingOutputCall", recorder: recorder)
      box.call = call
      var request = Grpc_Testing_StreamingOutputCallRequest()
      // Many small responses, so several are queued behind the first when it is delivered.
      request.responseParameters = Array(repeating: InteropRequests.parameters(size: 10), count: 50)
      call.start()
      call.writeData(try request.bytes)
      call.finish()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)
      #expect(close.error?.message == "Canceled by app")
      try await Self.expectNothingMoreArrives(recorder)
      #expect(recorder.messages.count == 1)
    }
  }

  @Test("start + write + cancel at once: no message, code 1")
  func startWriteCancel() async throws {
    try await withTestServer { server in
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [InteropRequests.parameters(size: 10)]
      let (call, recorder) = try server.call("FullDuplexCall")
      call.start()
      call.writeData(try request.bytes)
      call.cancel()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)
      #expect(close.error?.message == "Canceled by app")
      try await Self.expectNothingMoreArrives(recorder)
      #expect(recorder.messages.isEmpty)
    }
  }

  @Test(
    "1,000 open calls cancelled one after another: the server closes the connection every 200 resets; each call closes once; the channel carries on"
  )
  func manyResets() async throws {
    try await withTestServer { server in
      // Each call's stream is open (its first response arrived) when it is cancelled, so each
      // cancel resets a stream. swift-nio-http2 servers close a connection after 200 resets
      // within 30 s (rapid-reset protection): the channel must carry on over a new one.
      let calls = 1000
      var lost = 0
      var wrong: [String] = []
      var cancels: [ContinuousClock.Instant] = []
      for index in 0 ..< calls {
        let (call, recorder) = try server.call("FullDuplexCall")
        call.start()
        call.writeData(try InteropRequests.stream(count: 1, size: 1).bytes)
        // The first response; or the close of a call that went out on the connection the
        // server was closing.
        await recorder.wait { !$0.messages.isEmpty || $0.close != nil }
        call.cancel()
        cancels.append(.now)
        let close = await recorder.waitForClose()
        switch close?.error {
        case let error? where error.code == .cancelled && !recorder.messages.isEmpty:
          ()
        case let error?
        where error.code == .unavailable
          && (error.message == "Stream unexpectedly closed."
            || error.message.hasPrefix(
              "The server did not process the call: it closed the connection (GOAWAY ENHANCE_YOUR_CALM"
            )
            || error.message.hasPrefix("The server reset the stream (RST_STREAM REFUSED STREAM")
            || error.message.hasPrefix("The call's stream did not leave the client")):
          // A streaming call's requests cannot be sent again: one the server did not process
          // fails, saying so.
          lost += 1
        default:
          wrong.append("call \(index): \(String(describing: close?.error))")
        }
        if recorder.closeCount != 1 {
          wrong.append("call \(index): \(recorder.closeCount) closes")
        }
      }
      #expect(wrong.isEmpty, "\(wrong.prefix(5))")
      let closedConnections = server.recorder.acceptedConnections - 1
      // Only a machine that cancelled 201 calls within 30 s reached the server's limit.
      let reachedLimit = zip(cancels, cancels.dropFirst(200)).contains { $1 - $0 < .seconds(29) }
      #expect(
        closedConnections > 0 || !reachedLimit,
        "the server never closed a connection: the premise changed"
      )
      // A call that raced the server's close can fail (the Reliability article): one per close.
      #expect(
        lost <= closedConnections,
        "\(lost) calls lost their connection; the server closed \(closedConnections)"
      )
      let next = try await server.complete("EmptyCall", Grpc_Testing_Empty())
      #expect(next.close.error == nil, "\(String(describing: next.close.error))")
      print(
        "\(calls) resets: the server closed \(closedConnections) connections; \(lost) calls raced a close"
      )
    }
  }

  @Test("cancel before start closes the call and start does nothing after")
  func cancelBeforeStart() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("EmptyCall")
      call.cancel()
      call.start()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)
      try await Self.expectNothingMoreArrives(recorder)
      #expect(server.recorder.rpcs.isEmpty)
    }
  }

  @Test("cancel after close is a no-op")
  func cancelAfterClose() async throws {
    try await withTestServer { server in
      let (call, recorder, close) = try await server.complete("EmptyCall", Grpc_Testing_Empty())
      #expect(close.error == nil)
      call.cancel()
      try await Self.expectNothingMoreArrives(recorder)
      #expect(recorder.close?.error == nil)
    }
  }

  @Test("cancelling stops the server's stream")
  func cancelReachesServer() async throws {
    try await withTestServer { server in
      let (call, recorder) = try server.call("FullDuplexCall")
      call.start()
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [InteropRequests.parameters(size: 1)]
      call.writeData(try request.bytes)
      #expect(await recorder.wait { $0.messages.count == 1 })
      call.cancel()
      _ = await recorder.waitForClose()
      // A fresh call on the same channel still works: the cancelled stream did not break it.
      try await server.client.run(.emptyUnary)
    }
  }

  @Test("a cancel made while another thread performs the call's actions still reaches the server")
  func cancelWhileAnotherThreadPerforms() async throws {
    try await withTestServer { server in
      let gate = DemandGate()
      var options = server.options
      options.enableFlowControl = true
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { HeldDemandInterceptor(manager: $0, gate: gate) }
      ]
      let (call, recorder) = try server.call("StreamingOutputCall", options: options)
      let request = InteropRequests.longStream()
      call.start()
      call.writeData(try request.bytes)
      call.finish()
      // The server's handler runs: a cancel now has a stream to end.
      #expect(await eventually { server.recorder.streamedResponses > 0 ? true : nil } == true)
      // Another thread asks for a message and is held inside the call's chain: it is the
      // thread performing the call's actions, so the cancel below is queued behind it, and the
      // cancel's close reaches the handler first.
      Thread.detachNewThread { call.receiveNextMessages(1) }
      #expect(await eventually { gate.isHolding ? true : nil } == true)
      call.cancel()
      let close = try #require(await recorder.waitForClose())
      #expect(close.error?.code == .cancelled)
      gate.release()
      let stopped = await server.streamStopped()
      #expect(stopped, "the cancel never left the client: \(server.streamProgress)")
    }
  }

  /// Waits a little and checks the recorder saw one close, last, and nothing after it.
  static func expectNothingMoreArrives(_ recorder: CallRecorder) async throws {
    try await Task.sleep(for: .milliseconds(200))
    #expect(recorder.closeCount == 1)
    #expect(recorder.deliveryContractHeld)
  }
}

/// Holds the thread that brings a demand into ``HeldDemandInterceptor`` until released.
private final class DemandGate: Sendable {
  private let holding = LockedValue(false)
  private let released = DispatchSemaphore(value: 0)

  var isHolding: Bool { self.holding.withLock { $0 } }

  /// Blocks the calling thread until ``release()``.
  func hold() {
    self.holding.withLock { $0 = true }
    self.released.wait()
  }

  func release() {
    self.released.signal()
  }
}

/// An inline interceptor whose first demand blocks its thread at the gate, then passes on.
private final class HeldDemandInterceptor: GRPCInterceptor, @unchecked Sendable {
  private let gate: DemandGate
  private let held = LockedValue(false)

  init(manager: GRPCInterceptorManager, gate: DemandGate) {
    self.gate = gate
    super.init(manager: manager, executesInline: true)
  }

  override func receiveNextMessages(_ count: Int) {
    let first = self.held.withLock { held in
      defer { held = true }
      return !held
    }
    if first {
      self.gate.hold()
    }
    super.receiveNextMessages(count)
  }
}
