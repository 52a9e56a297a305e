public import Foundation
public import GRPCCalls
public import GRPCCallsInterop
internal import GRPCCore
public import SwiftProtobuf

/// A real interop server on 127.0.0.1:0 and a channel pool of the test's own.
public struct TestServer: Sendable {
  public let server: InteropServer
  public let pool: GRPCChannelPool

  public var recorder: InteropServerRecorder { self.server.recorder }

  /// Plaintext options, as every test against the local server needs.
  public var options: GRPCCallOptions {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    return options
  }

  public var client: InteropClient {
    InteropClient(target: self.server.target, callOptions: self.options, channelPool: self.pool)
  }

  /// Makes a call to a TestService method on this server.
  public func call(
    _ method: String,
    service: String = "grpc.testing.TestService",
    options: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default,
    recorder: CallRecorder = CallRecorder()
  ) throws -> (GRPCCall2, CallRecorder) {
    try self.client.makeCall(
      method,
      service: service,
      options: options,
      safety: safety,
      recorder: recorder
    )
  }

  /// Starts `method`, sends `request`, half-closes and waits for the close.
  ///
  /// - Throws: ``TestSupportFailure`` when the call does not close within `CloseWait.seconds`.
  public func complete(
    _ method: String,
    _ request: some SwiftProtobuf.Message,
    options: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default
  ) async throws -> (call: GRPCCall2, recorder: CallRecorder, close: CallRecorder.Close) {
    let (call, recorder) = try self.call(method, options: options, safety: safety)
    call.start()
    call.writeData(try request.bytes)
    call.finish()
    guard let close = await recorder.waitForClose() else {
      throw TestSupportFailure(
        description: "\(method) did not close within \(Int(CloseWait.seconds)) s"
      )
    }
    return (call, recorder, close)
  }

  /// Whether the server saw its response stream ended from the client side (a write failed, or
  /// the RPC was cancelled by the client's RST_STREAM): waits for the server's own record
  /// (`InteropServerRecorder.streamsEndedEarly`), rather than sampling its progress.
  ///
  /// How many responses the handler wrote says nothing here: after the reset the transport may
  /// accept its writes and drop them.
  public func streamStopped() async -> Bool {
    // Generous: on a busy machine the server's handler may wait long for a thread to run on
    // and record the end (.ci/run's under-load pass once took over 30 s).
    await eventually(upTo: 120) { self.recorder.streamsEndedEarly > 0 ? true : nil } == true
  }

  /// What the server's streaming handlers did, for a failure message: responses written,
  /// streams ended by the client, streams written to their end.
  public var streamProgress: String {
    let recorder = self.recorder
    return "the server's handlers wrote \(recorder.streamedResponses) responses; "
      + "\(recorder.streamsEndedEarly) stream(s) ended by the client, \(recorder.streamsCompleted) written to their end"
  }
}

/// Runs `body` against a fresh server (plaintext, or TLS with `tls`) and pool, then tears both
/// down.
///
/// - Parameters:
///   - poolConfig: The configuration of the test's channel pool; by default one whose channels
///     stay open until the test ends (``GRPCCalls/GRPCChannelPool/Config/forTests``).
///   - tls: The server's TLS identity; `nil` serves plaintext.
///   - compression: Whether the server takes gzip and deflate (and so compresses its responses).
///   - path: The path calls take to the core; by default the one `GRPC_CALLS_RPC_PATH` names
///     (see ``RPCPath``).
///   - maxConcurrentStreams: The server's limit on streams per connection; none by default.
///   - maxConnectionIdle: How long the server keeps a connection without RPCs; for good by
///     default.
///   - minPingInterval: How often the server lets a client ping while it has calls open; the
///     transport's default (5 minutes) when `nil`. A test whose client pings every few seconds on
///     a quiet stream for longer than a minute needs a shorter one, or the server ends it.
///   - body: The test, given the server and the pool.
public func withTestServer(
  poolConfig: GRPCChannelPool.Config = .forTests,
  tls: InteropServer.TLSIdentity? = nil,
  compression: Bool = true,
  path: RPCPath = .current,
  maxConcurrentStreams: Int? = nil,
  maxConnectionIdle: Duration? = nil,
  minPingInterval: Duration? = nil,
  _ body: (TestServer) async throws -> Void
) async throws {
  let server = try await InteropServer.start(
    host: "127.0.0.1",
    port: 0,
    tls: tls,
    compression: compression,
    maxConcurrentStreams: maxConcurrentStreams,
    maxConnectionIdle: maxConnectionIdle,
    minPingInterval: minPingInterval
  )
  var poolConfig = poolConfig
  poolConfig.sendsEveryCallThroughClient = path == .client
  let pool = GRPCChannelPool(config: poolConfig)
  defer { pool.disconnectAll() }
  do {
    try await body(TestServer(server: server, pool: pool))
  } catch {
    await server.stopAndWait()
    throw error
  }
  pool.disconnectAll()
  await server.stopAndWait()
}

/// A test-support failure.
public struct TestSupportFailure: Error, CustomStringConvertible {
  public var description: String

  public init(description: String) {
    self.description = description
  }
}

/// Polls `value` until it is not `nil`, for up to `seconds`.
public func eventually<T: Sendable>(
  upTo seconds: Double = CloseWait.seconds,
  _ value: () -> T?
) async -> T? {
  var found: T?
  _ = await CloseWait.poll(upTo: seconds) {
    found = value()
    return found != nil
  }
  return found
}

/// Polls `count` every 100 ms until it holds still for a second; `nil` if it never does within
/// `seconds`. For "the server stopped writing": how far it got is the figure a test bounds, so a
/// slow machine that takes longer to stop only makes the wait longer.
public func steadyValue(
  upTo seconds: Double = CloseWait.seconds,
  _ count: () -> Int
) async -> Int? {
  let deadline = ContinuousClock.now + .seconds(seconds)
  var last = count()
  var unchanged = 0
  while ContinuousClock.now < deadline {
    try? await Task.sleep(for: .milliseconds(100))
    let now = count()
    unchanged = now == last ? unchanged + 1 : 0
    last = now
    if unchanged >= 10 { return now }
  }
  return nil
}

/// The path a test's calls take to the core (Design article, "The path of a call"): the transport's stream directly, or
/// `GRPCClient`.
///
/// Calls without a retry policy take the raw path; `GRPC_CALLS_RPC_PATH=client swift test`
/// sends every call of the suite through `GRPCClient` instead, so that both paths pass the same
/// behaviour tests (CI runs both).
public enum RPCPath: String, Sendable, CaseIterable {
  case raw
  case client

  /// The path `GRPC_CALLS_RPC_PATH` names; the raw path when it names none.
  public static var current: RPCPath {
    ProcessInfo.processInfo.environment["GRPC_CALLS_RPC_PATH"].flatMap(RPCPath.init(rawValue:))
      ?? .raw
  }
}

/// Wall-clock time a test moves by hand, for expiries (`now:` parameters).
public final class ManualClock: Sendable {
  private let offset = LockedValue<TimeInterval>(0)

  public init() {}

  public func now() -> Date { Date(timeIntervalSince1970: 1_000_000 + self.offset.withLock { $0 }) }

  public func advance(by seconds: TimeInterval) { self.offset.withLock { $0 += seconds } }
}
