import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// An interceptor made without a queue of its own gets a serial queue that targets where the
/// element above runs its responses, so a response reaches the handler in one thread hand-off.
@Suite("An interceptor's default queue")
struct InterceptorDefaultQueueTests {
  @Test(
    "targets the response handler's queue: every event runs on the interceptor's queue, within the handler's"
  )
  func targetsHandlerQueue() async throws {
    let handler = NamedQueue("handler")
    let seen = try await Self.unaryCall(handler: handler) { log in
      [QueueProbe.factory("I", log: log, sees: [handler])]
    }
    #expect(seen == ["I.start: own handler", "I.close: own handler"])
  }

  @Test("below another interceptor, targets that interceptor's queue")
  func targetsQueueAbove() async throws {
    let handler = NamedQueue("handler")
    let above = NamedQueue("above")
    let seen = try await Self.unaryCall(handler: handler) { log in
      [
        QueueProbe.factory("A", log: log, queue: above, sees: [handler, above]),
        QueueProbe.factory("B", log: log, sees: [handler, above]),
      ]
    }
    // A's queue was given, so it targets nothing of the call's; B's targets A's.
    #expect(
      seen == [
        "A.start: own above", "B.start: own above", "B.close: own above", "A.close: own above",
      ]
    )
  }

  @Test("below an inline interceptor, targets what that one passes responses to")
  func skipsInlineAbove() async throws {
    let handler = NamedQueue("handler")
    let seen = try await Self.unaryCall(handler: handler) { log in
      [
        QueueProbe.factory("A", log: log, inline: true, sees: [handler]),
        QueueProbe.factory("B", log: log, sees: [handler]),
      ]
    }
    #expect(seen.filter { $0.hasPrefix("B.") } == ["B.start: own handler", "B.close: own handler"])
  }

  @Test("a queue the interceptor gives is used as it is")
  func givenQueueKept() async throws {
    let handler = NamedQueue("handler")
    let given = NamedQueue("given")
    let seen = try await Self.unaryCall(handler: handler) { log in
      [QueueProbe.factory("I", log: log, queue: given, sees: [handler, given])]
    }
    #expect(seen == ["I.start: own given", "I.close: own given"])
  }

  @Test(
    "responses reach the handler inside the interceptor's block, not in a block of the handler's queue after it",
    arguments: [false, true]
  )
  func responsesDeliveredInBlock(concurrentHandlerQueue: Bool) async throws {
    let queue =
      concurrentHandlerQueue
      ? DispatchQueue(label: "test.handler", attributes: .concurrent)
      : DispatchQueue(label: "test.handler")
    let seen = try await Self.unaryCall(handlerQueue: queue, logHandlerClose: true) { log, _ in
      [HandOffProbe.factory("I", log: log)]
    }
    #expect(seen == ["I.close: in I's block", "handler.close: in I's block"])
  }

  @Test("through two interceptors, a response reaches the handler inside the lower one's block")
  func responsesDeliveredThroughTwo() async throws {
    let seen = try await Self.unaryCall(
      handlerQueue: DispatchQueue(label: "test.handler"),
      logHandlerClose: true
    ) { log, _ in
      [HandOffProbe.factory("A", log: log), HandOffProbe.factory("B", log: log)]
    }
    // B passes the close to A, whose queue B's targets: A's event and the handler run in B's block.
    #expect(
      seen == ["B.close: in B's block", "A.close: in B's block", "handler.close: in B's block"]
    )
  }

  @Test(
    "a handler callback delivered in the interceptor's block that cancels another call of its queue gets that close later"
  )
  func otherCallsStillScheduled() async throws {
    let queue = DispatchQueue(label: "test.handler")
    let log = InterceptorLog()
    try await withTestServer { server in
      let other = CallRecorder(queue: queue)
      let (otherCall, _) = try server.call("FullDuplexCall", recorder: other)
      otherCall.start()
      // Inside this call's close, delivered in its interceptor's block, which runs within the
      // queue the other call's handler shares: the other close must not run inside this one.
      let recorder = CallRecorder(
        queue: queue,
        onClose: { _ in
          log.append(["handler.close: in \(HandOffProbe.currentBlock)"])
          otherCall.cancel()
          log.append(["other call's closes inside: \(other.closeCount)"])
        }
      )
      var options = server.options
      options.interceptorFactories = [HandOffProbe.factory("I", log: log)]
      let (call, _) = try server.call("UnaryCall", options: options, recorder: recorder)
      call.start()
      call.writeData(try Grpc_Testing_SimpleRequest().bytes)
      call.finish()
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(await other.waitForClose()?.error?.code == .cancelled)
      #expect(other.deliveryContractHeld)
    }
    #expect(
      log.all == [
        "I.close: in I's block", "handler.close: in I's block", "other call's closes inside: 0",
      ]
    )
  }

  /// One `UnaryCall` whose handler runs on `handler`, through the interceptors `factories` makes
  /// (recording into the log it is given); returns what the probes saw.
  private static func unaryCall(
    handler: NamedQueue,
    _ factories: (InterceptorLog) -> [any GRPCInterceptorFactory]
  ) async throws -> [String] {
    try await Self.unaryCall(handlerQueue: handler.queue) { log, _ in factories(log) }
  }

  /// One `UnaryCall` whose handler, a recorder, runs on `handlerQueue`, through the interceptors
  /// `factories` makes; returns what they logged (and, with `logHandlerClose`, where the
  /// handler's close ran).
  private static func unaryCall(
    handlerQueue: DispatchQueue,
    logHandlerClose: Bool = false,
    _ factories: (InterceptorLog, CallRecorder) -> [any GRPCInterceptorFactory]
  ) async throws -> [String] {
    let log = InterceptorLog()
    let recorder = CallRecorder(
      queue: handlerQueue,
      onClose: { _ in
        if logHandlerClose {
          log.append(["handler.close: in \(HandOffProbe.currentBlock)"])
        }
      }
    )
    let factories = factories(log, recorder)
    try await withTestServer { server in
      var options = server.options
      options.interceptorFactories = factories
      let (call, recorder) = try server.call("UnaryCall", options: options, recorder: recorder)
      call.start()
      call.writeData(try Grpc_Testing_SimpleRequest().bytes)
      call.finish()
      #expect(await recorder.waitForClose()?.error == nil)
      #expect(recorder.deliveryContractHeld)
    }
    return log.all
  }
}

/// A dispatch queue that says, from inside any block, whether the block runs within it.
struct NamedQueue: Sendable {
  let name: String
  let queue: DispatchQueue
  private let key = DispatchSpecificKey<String>()

  init(_ name: String) {
    self.name = name
    self.queue = DispatchQueue(label: "test.\(name)")
    self.queue.setSpecific(key: self.key, value: name)
  }

  /// Whether this thread runs a block of the queue, or of a queue that targets it.
  var isCurrent: Bool { DispatchQueue.getSpecific(key: self.key) == self.name }
}

/// A pass-through interceptor that records, at its start and its close, whether the event ran
/// on its own queue and which of `sees` it ran within.
private final class QueueProbe: GRPCInterceptor, @unchecked Sendable {
  private let name: String
  private let log: InterceptorLog
  private let sees: [NamedQueue]
  private let ownKey = DispatchSpecificKey<Bool>()

  init(
    manager: GRPCInterceptorManager,
    name: String,
    log: InterceptorLog,
    queue: NamedQueue?,
    inline: Bool,
    sees: [NamedQueue]
  ) {
    self.name = name
    self.log = log
    self.sees = sees
    super.init(manager: manager, dispatchQueue: queue?.queue, executesInline: inline)
    self.dispatchQueue.setSpecific(key: self.ownKey, value: true)
  }

  static func factory(
    _ name: String,
    log: InterceptorLog,
    queue: NamedQueue? = nil,
    inline: Bool = false,
    sees: [NamedQueue]
  ) -> GRPCClosureInterceptorFactory {
    GRPCClosureInterceptorFactory {
      QueueProbe(manager: $0, name: name, log: log, queue: queue, inline: inline, sees: sees)
    }
  }

  private func record(_ event: String) {
    let own = DispatchQueue.getSpecific(key: self.ownKey) == true ? "own" : "elsewhere"
    let within = self.sees.filter(\.isCurrent).map(\.name)
    let entry = "\(self.name).\(event): \(([own] + within).joined(separator: " "))"
    self.log.append([entry])
  }

  override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    self.record("start")
    super.start(requestOptions: requestOptions, callOptions: callOptions)
  }

  override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.record("close")
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }
}

/// A pass-through interceptor on its default queue, whose queue carries its name, so that its
/// close and the handler's say in which interceptor's block they run.
private final class HandOffProbe: GRPCInterceptor, @unchecked Sendable {
  private static let key = DispatchSpecificKey<String>()
  private let name: String
  private let log: InterceptorLog

  /// The innermost probe whose block this thread runs.
  static var currentBlock: String {
    DispatchQueue.getSpecific(key: Self.key).map { "\($0)'s block" } ?? "no probe's block"
  }

  init(manager: GRPCInterceptorManager, name: String, log: InterceptorLog) {
    self.name = name
    self.log = log
    super.init(manager: manager)
    self.dispatchQueue.setSpecific(key: Self.key, value: name)
  }

  static func factory(_ name: String, log: InterceptorLog) -> GRPCClosureInterceptorFactory {
    GRPCClosureInterceptorFactory { HandOffProbe(manager: $0, name: name, log: log) }
  }

  override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.log.append(["\(self.name).close: in \(Self.currentBlock)"])
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }
}
