import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

/// One call driven from several threads at once: requests leave in each thread's program
/// order, the call closes exactly once, and nothing is delivered after the close.
@Suite("A call driven from several threads")
struct ConcurrentDrivingTests {
  /// Threads that write, and how many messages each writes.
  static let writers = 3
  static let writesPerThread = 3
  /// 10,000; `GRPC_CALLS_DRIVING_CALLS` lowers it where each call is slow to run, as under
  /// ThreadSanitizer (scripts/test-sanitized.sh runs 1,000).
  static let total =
    ProcessInfo.processInfo.environment["GRPC_CALLS_DRIVING_CALLS"].flatMap { Int($0) } ?? 10_000
  /// A quarter of the calls cancel, most after their stream opened, which resets it. The
  /// server closes a connection that reset 200 streams within 30 s (swift-nio-http2's
  /// rapid-reset protection; the Reliability article), failing the calls in flight on it; and a
  /// close with streams in flight can trip a debug assertion in grpc-swift-nio-transport
  /// ("Can't close stream N, it wasn't open"), which ends the test process. So each channel
  /// carries 512 calls, 128 resets at most; `CancellationTests.manyResets` shows a channel
  /// carrying on past the limit.
  static let callsPerChannel = 512

  @Test("10,000 calls: each thread's writes arrive in its order; one close; nothing after it")
  func tenThousandCalls() async throws {
    try await withTestServer { server in
      var options = server.options
      options.enableFlowControl = true
      options.timeout = CloseWait.seconds
      let total = Self.total
      let inFlight = 8
      var started = 0
      var outcomes = Outcomes()
      try await withThrowingTaskGroup(of: Outcomes.self) { group in
        func launch(_ index: Int) throws {
          // A new channel every `callsPerChannel` calls: see there.
          options.channelId = index / Self.callsPerChannel
          let (call, recorder) = try server.call("FullDuplexCall", options: options)
          group.addTask { await Self.drive(call, recorder, cancels: index % 4 == 3) }
        }
        while started < min(inFlight, total) {
          try launch(started)
          started += 1
        }
        while let outcome = try await group.next() {
          outcomes.add(outcome)
          if started < total {
            try launch(started)
            started += 1
          }
        }
      }
      #expect(outcomes.calls == total)
      #expect(outcomes.failures.isEmpty, "\(outcomes.failures.prefix(5))")
      // Some calls were cancelled before their close, and some were not.
      #expect(outcomes.cancelled > 0)
      #expect(outcomes.completed > 0)
    }
  }

  struct Outcomes: Sendable {
    var calls = 0
    var cancelled = 0
    var completed = 0
    var failures: [String] = []

    mutating func add(_ other: Outcomes) {
      self.calls += other.calls
      self.cancelled += other.cancelled
      self.completed += other.completed
      self.failures += other.failures
    }
  }

  /// Drives `call` from `writers` threads (one also starts it, one asks for messages, one
  /// finishes after its writes, and one may cancel), then checks what came back.
  static func drive(_ call: GRPCCall2, _ recorder: CallRecorder, cancels: Bool) async -> Outcomes {
    DispatchQueue.concurrentPerform(iterations: Self.writers + (cancels ? 1 : 0)) { thread in
      if thread == Self.writers {
        call.cancel()
        return
      }
      if thread == 0 { call.start() }
      if thread == 1 { call.receiveNextMessages(1_000) }
      for index in 0 ..< Self.writesPerThread {
        call.writeData(Self.request(thread: thread, index: index))
      }
      if thread == 2 { call.finish() }
    }
    // A cancel may have come first; otherwise the finish half-closed the call.
    guard let close = await recorder.waitForClose() else {
      return Outcomes(calls: 1, failures: ["a call did not close"])
    }
    var outcome = Outcomes(calls: 1)
    if !recorder.deliveryContractHeld || recorder.closeCount != 1 {
      outcome.failures.append("the delivery contract broke: \(recorder.events)")
    }
    switch close.error?.code {
    case nil:
      outcome.completed = 1
    case .cancelled?:
      outcome.cancelled = 1
    case let code?:
      outcome.failures.append("closed with \(code): \(close.error!)")
    }
    // The server answers each request in the order it got them; each response's size says
    // which thread wrote it and in which place.
    var seen = Array(repeating: [Int](), count: Self.writers)
    for message in recorder.messages {
      guard let response = try? Grpc_Testing_StreamingOutputCallResponse(serializedBytes: message)
      else {
        outcome.failures.append("an unreadable response")
        continue
      }
      let code = response.payload.body.count - 1
      seen[code / 100].append(code % 100)
    }
    for (thread, indices) in seen.enumerated() where indices != Array(0 ..< indices.count) {
      outcome.failures.append("thread \(thread)'s writes arrived as \(indices)")
    }
    if close.error == nil, seen.map(\.count).reduce(0, +) < Self.writesPerThread {
      // Thread 2 finished after its own writes, so at least those were sent.
      outcome.failures.append("a completed call delivered only \(seen.map(\.count)) responses")
    }
    return outcome
  }

  /// A request asking for a response whose size encodes `thread` and `index`.
  static func request(thread: Int, index: Int) -> Data {
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = [InteropRequests.parameters(size: Int32(thread * 100 + index + 1))]
    return try! request.serializedData()
  }
}
