import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Synchronization

/// Events that interceptors saw, as "name.event", in the order they ran across the chain.
final class InterceptorLog: Sendable {
  private let entries = LockedValue<[String]>([])

  var all: [String] { self.entries.withLock { $0 } }

  func append(_ entries: [String]) {
    self.entries.withLock { $0.append(contentsOf: entries) }
  }

  /// How many times `name` saw `event`.
  func count(_ name: String, _ event: String) -> Int {
    self.all.count { $0 == "\(name).\(event)" }
  }

  /// The names that saw `event`, in the order they saw it.
  func order(of event: String) -> [String] {
    self.all.compactMap { entry in
      let parts = entry.split(separator: ".", maxSplits: 1)
      return parts.count == 2 && parts[1] == event ? String(parts[0]) : nil
    }
  }
}

/// A pass-through interceptor that records each event it sees, and checks that every event
/// runs on its own queue.
///
/// With `host`, it records only calls to that host: a global interceptor sees every call in the
/// test process, and the other suites run beside this one. Events before the start (when the
/// host becomes known) wait for it.
final class CountingInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: `pending` and `matches` are touched only by this interceptor's events, which
  // the manager runs one at a time.
  private let name: String
  private let log: InterceptorLog
  private let host: String?
  private let queueKey: DispatchSpecificKey<String>
  private var pending: [String] = []
  private var matches: Bool?

  /// Set while an event runs: an inline interceptor's events must not overlap either.
  private let running = Atomic(false)

  /// - Parameter queue: The interceptor's queue (it may be concurrent and shared); a serial
  ///   queue of its own by default.
  init(
    manager: GRPCInterceptorManager,
    name: String,
    log: InterceptorLog,
    host: String? = nil,
    inline: Bool = false,
    queue: DispatchQueue? = nil
  ) {
    self.name = name
    self.log = log
    self.host = host
    let queue = queue ?? DispatchQueue(label: "counting.\(name)")
    self.queueKey = DispatchSpecificKey<String>()
    queue.setSpecific(key: self.queueKey, value: name)
    super.init(manager: manager, dispatchQueue: queue, executesInline: inline)
  }

  /// A factory making one per call.
  static func factory(
    _ name: String,
    log: InterceptorLog,
    host: String? = nil,
    inline: Bool = false,
    queue: DispatchQueue? = nil
  ) -> GRPCClosureInterceptorFactory {
    GRPCClosureInterceptorFactory { manager in
      CountingInterceptor(
        manager: manager,
        name: name,
        log: log,
        host: host,
        inline: inline,
        queue: queue
      )
    }
  }

  private func record(_ event: String) {
    // Queued: each event on the interceptor's queue, never two at once (the queue may be
    // concurrent). Inline: on any thread, never two at once.
    let alone = self.running.exchange(true, ordering: .acquiring) == false
    defer { if alone { self.running.store(false, ordering: .releasing) } }
    let onQueue = DispatchQueue.getSpecific(key: self.queueKey) == self.name
    let entry = "\(self.name).\((alone && (self.executesInline || onQueue)) ? event : "off-queue")"
    switch self.matches {
    case nil: self.pending.append(entry)
    case true?: self.log.append([entry])
    case false?: break
    }
  }

  override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    let matches = self.host.map { $0 == requestOptions.host } ?? true
    self.matches = matches
    if matches {
      self.log.append(self.pending)
    }
    self.pending = []
    self.record("start")
    super.start(requestOptions: requestOptions, callOptions: callOptions)
  }

  override func writeData(_ data: any Sendable) {
    self.record("write")
    super.writeData(data)
  }

  override func finish() {
    self.record("finish")
    super.finish()
  }

  override func cancel() {
    self.record("cancel")
    super.cancel()
  }

  override func receiveNextMessages(_ count: Int) {
    self.record("receiveNextMessages")
    super.receiveNextMessages(count)
  }

  override func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.record("headers")
    super.didReceiveInitialMetadata(initialMetadata)
  }

  override func didReceiveData(_ data: any Sendable) {
    self.record("data")
    super.didReceiveData(data)
  }

  override func didWriteData() {
    self.record("didWriteData")
    super.didWriteData()
  }

  override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.record("close")
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }
}

/// Collects whatever a call delivers, typed messages included.
final class TypedCollector: GRPCResponseHandler {
  let dispatchQueue = DispatchQueue(label: "typed-collector")
  private let state = LockedValue<(messages: [any Sendable], close: CallRecorder.Close?)>(([], nil))

  var messages: [any Sendable] { self.state.withLock { $0.messages } }

  func didReceiveData(_ data: any Sendable) {
    self.state.withLock { $0.messages.append(data) }
  }

  func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.state.withLock { $0.close = (trailingMetadata, error) }
  }

  func waitForClose(upTo seconds: Double = CloseWait.seconds) async -> CallRecorder.Close? {
    await eventually(upTo: seconds) { self.state.withLock { $0.close } }
  }
}
