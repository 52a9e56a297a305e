import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// The states a callback observer was told, and whether each came on its queue.
private final class StateLog: Sendable {
  let queue = DispatchQueue(label: "connectivity-observer")
  private let states = LockedValue<[GRPCConnectivityState]>([])
  private let offQueue = LockedValue(0)

  func record(_ state: GRPCConnectivityState) {
    if !self.queue.isCurrent {
      self.offQueue.withLock { $0 += 1 }
    }
    self.states.withLock { $0.append(state) }
  }

  var recorded: [GRPCConnectivityState] { self.states.withLock { $0 } }
  var deliveriesOffQueue: Int { self.offQueue.withLock { $0 } }

  /// Waits until `state` was recorded `occurrence` times, for up to `CloseWait.seconds`.
  func wait(for state: GRPCConnectivityState, occurrence: Int = 1) async throws {
    guard await CloseWait.poll(until: { self.recorded.count { $0 == state } >= occurrence }) else {
      Issue.record("\(state) #\(occurrence) never came; states so far: \(self.recorded)")
      throw CancellationError()
    }
  }
}

extension DispatchQueue {
  /// Whether the current code runs on this queue.
  fileprivate var isCurrent: Bool {
    let key = DispatchSpecificKey<ObjectIdentifier>()
    self.setSpecific(key: key, value: ObjectIdentifier(self))
    defer { self.setSpecific(key: key, value: nil) }
    return DispatchQueue.getSpecific(key: key) == ObjectIdentifier(self)
  }
}

@Suite("Connectivity state")
struct ConnectivityTests {
  static func options() -> GRPCCallOptions {
    var options = GRPCCallOptions().reconnectingSoon()
    options.transportType = .insecure
    options.timeout = CloseWait.seconds
    return options
  }

  @Test(
    "connect, server stopped, reconnect, idle close, shutdown: each observer sees every change once, in order, on its queue"
  )
  func lifecycle() async throws {
    var server = try await InteropServer.start(host: "127.0.0.1", port: 0, compression: false)
    let port = server.port
    let host = "127.0.0.1:\(port)"
    let pool = GRPCChannelPool(config: .init(idleTimeout: .seconds(3)))
    let options = Self.options()

    let log = StateLog()
    let observation = try pool.observeState(host: host, options: options, queue: log.queue) {
      log.record($0)
    }
    let stream = try pool.stateChanges(host: host, options: options)
    let streamed = Task {
      var states: [GRPCConnectivityState] = []
      for await state in stream { states.append(state) }
      return states
    }
    #expect(try pool.state(host: host, options: options) == .idle)

    // Connect ahead of any call.
    try pool.connect(host: host, options: options)
    try await log.wait(for: .ready)
    // Or idle already, when a busy machine took the pool's idle timeout to get here.
    #expect(try [.ready, .idle].contains(pool.state(host: host, options: options)))

    // The server stops (a GOAWAY, no call running): the channel goes idle.
    await server.stopAndWait()
    try await log.wait(for: .idle, occurrence: 2)

    // A call that waits for ready while the server is down: attempts fail until it is back.
    var waiting = options
    waiting.waitForReady = true
    let client = InteropClient(target: host, callOptions: waiting, channelPool: pool)
    let (call, recorder) = try client.makeCall("UnaryCall")
    call.start()
    call.writeData(try unaryRequest(responseBytes: 10).bytes)
    call.finish()
    try await log.wait(for: .transientFailure)
    server = try await InteropServer.start(host: "127.0.0.1", port: port, compression: false)
    let close = await recorder.waitForClose()
    #expect(close?.error == nil, "\(String(describing: close?.error))")
    try await log.wait(for: .ready, occurrence: 2)

    // No call for the pool's idle timeout: the channel closes.
    try await log.wait(for: .idle, occurrence: 3)

    pool.shutDown()
    let expected: [GRPCConnectivityState] = [
      .idle, .connecting, .ready, .idle, .connecting, .transientFailure, .ready, .idle, .shutdown,
    ]
    #expect(await streamed.value == expected)
    try await log.wait(for: .shutdown)
    #expect(log.recorded == expected)
    #expect(log.deliveriesOffQueue == 0)
    #expect(try pool.state(host: host, options: options) == .shutdown)
    observation.cancel()
    await server.stopAndWait()
  }

  @Test("the server process killed under a call: READY, TRANSIENT_FAILURE until it is back, READY")
  func serverKilledUnderCall() async throws {
    let first = try ToolProcess(["serve", "--port", "0"])
    let listening = try await first.line(startingWith: "listening on ")
    let host = String(listening.dropFirst("listening on ".count))
    let port = try #require(host.split(separator: ":").last.flatMap { Int($0) })
    let pool = GRPCChannelPool(config: .forTests)
    let options = Self.options()
    let log = StateLog()
    let observation = try pool.observeState(host: host, options: options, queue: log.queue) {
      log.record($0)
    }

    // A stream left open, answered once: the connection has a call on it when the server dies.
    // No deadline: only the kill may end it, however long a busy machine takes to get there.
    var open = options
    open.timeout = 0
    let client = InteropClient(target: host, callOptions: open, channelPool: pool)
    let (call, recorder) = try client.makeCall("FullDuplexCall")
    call.start()
    call.writeData(try InteropRequests.stream(count: 1, size: 1).bytes)
    #expect(await recorder.wait { $0.messages.count >= 1 }, "the stream did not answer")
    try await log.wait(for: .ready)
    await first.kill()
    try await log.wait(for: .transientFailure)
    #expect(await recorder.waitForClose()?.error?.code == .unavailable)

    let second = try ToolProcess(["serve", "--port", "\(port)"])
    _ = try await second.line(startingWith: "listening on ")
    try await log.wait(for: .ready, occurrence: 2)
    pool.shutDown()
    try await log.wait(for: .shutdown)
    // The transport reconnects at once; whether the new attempt or the end of the killed
    // connection is seen first decides whether CONNECTING shows before TRANSIENT_FAILURE.
    #expect(
      [
        [.idle, .connecting, .ready, .transientFailure, .ready, .shutdown],
        [.idle, .connecting, .ready, .connecting, .transientFailure, .ready, .shutdown],
      ].contains(log.recorded),
      "\(log.recorded)"
    )
    observation.cancel()
    await second.kill()
  }

  @Test("state(connect: true) connects an idle channel and returns the state it had")
  func stateConnects() async throws {
    let server = try await InteropServer.start(host: "127.0.0.1", port: 0, compression: false)
    let pool = GRPCChannelPool(config: .forTests)
    let options = Self.options()
    #expect(try pool.state(host: server.target, options: options, connect: true) == .idle)
    for await state in try pool.stateChanges(host: server.target, options: options)
    where state == .ready {
      break
    }
    #expect(server.recorder.acceptedConnections == 1)
    pool.shutDown()
    await server.stopAndWait()
  }

  @Test("after shutDown, calls fail with UNAVAILABLE and new observers see SHUTDOWN only")
  func afterShutdown() async throws {
    let server = try await InteropServer.start(host: "127.0.0.1", port: 0, compression: false)
    let pool = GRPCChannelPool()
    let options = Self.options()
    pool.shutDown()
    var states: [GRPCConnectivityState] = []
    for await state in try pool.stateChanges(host: server.target, options: options) {
      states.append(state)
    }
    #expect(states == [.shutdown])
    #expect(throws: GRPCError.self) { try pool.connect(host: server.target, options: options) }

    let client = InteropClient(target: server.target, callOptions: options, channelPool: pool)
    let (call, recorder) = try client.makeCall("UnaryCall")
    call.start()
    call.writeData(try unaryRequest(responseBytes: 10).bytes)
    call.finish()
    let error = await recorder.waitForClose()?.error
    #expect(error?.code == .unavailable)
    #expect(error?.message.contains("shut down") == true, "\(String(describing: error))")
    await server.stopAndWait()
  }

  @Test("calls racing shutDown() each close: none waits for a connection that never runs")
  func callsRacingShutdown() async throws {
    let server = try await InteropServer.start(host: "127.0.0.1", port: 0, compression: false)
    var options = Self.options()
    options.timeout = 0  // no deadline: a call that waited for good would never close
    var recorders: [CallRecorder] = []
    for _ in 0 ..< 100 {
      let pool = GRPCChannelPool()
      let client = InteropClient(target: server.target, callOptions: options, channelPool: pool)
      for _ in 0 ..< 3 {
        let (call, recorder) = try client.makeCall("UnaryCall")
        call.start()
        call.writeData(try unaryRequest(responseBytes: 10).bytes)
        call.finish()
        recorders.append(recorder)
      }
      pool.shutDown()
    }
    for recorder in recorders {
      let close = await recorder.waitForClose()
      #expect(close != nil, "a call racing shutDown() never closed")
      #expect(
        close?.error == nil || close?.error?.code == .unavailable,
        "\(String(describing: close?.error))"
      )
    }
    await server.stopAndWait()
  }

  @Test("a registered transport's state is UNIMPLEMENTED, naming the transport")
  func registeredTransport() throws {
    let registry = GRPCTransportRegistry()
    registry.register(
      InteropServer.inProcessTransportFactory(recorder: InteropServerRecorder()),
      for: GRPCTransportID("memory-test")
    )
    let pool = GRPCChannelPool(
      config: .init(idleTimeout: .seconds(30), transportRegistry: registry)
    )
    var options = Self.options()
    options.transport = GRPCTransportID("memory-test")
    let error = #expect(throws: GRPCError.self) {
      try pool.state(host: "127.0.0.1:1", options: options)
    }
    #expect(error?.code == .unimplemented)
    #expect(error?.message.contains("memory-test") == true)
  }
}
