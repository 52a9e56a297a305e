internal import GRPCCalls
public import GRPCCore

/// What the interop server saw: connections and the request metadata of every RPC.
///
/// Tests read it to check what reached the wire: which connections a client opened, which
/// metadata a call carried.
public final class InteropServerRecorder: Sendable {
  /// One RPC as the server received it.
  public struct ReceivedRPC: Sendable {
    /// The full method name, `grpc.testing.TestService/UnaryCall`.
    public var method: String
    /// The request headers, as the handler saw them.
    public var metadata: Metadata
    /// The client's address, `ipv4:127.0.0.1:54321`: one value per connection.
    public var peer: String
    /// When the handler saw it.
    public var arrival: ContinuousClock.Instant
  }

  private struct State {
    var acceptedConnections = 0
    var openConnections = 0
    var rpcs: [ReceivedRPC] = []
    var streamedResponses = 0
    var streamsEndedEarly = 0
    var streamsCompleted = 0
    var lastStreamCompletion: ContinuousClock.Instant?
    var attempts: [String: Int] = [:]
    var requestStreamEnds: [String: String] = [:]
    var requestStreamsRead: Set<String> = []
    var respondingStreams: [String: Int] = [:]
    var mostRespondingStreams: [String: Int] = [:]
  }

  private let state = LockedValue(State())

  /// The server's health service, whose statuses tests flip (``InteropHealthService/setKey``).
  public let health = InteropHealthService()

  /// Request metadata `<n>/<id>`: the first `n` RPCs carrying the same `id` fail with
  /// UNAVAILABLE ("attempt k fails on purpose"), so tests can exercise retries.
  public static let failAttemptsKey = "x-grpc-calls-fail-attempts"

  /// Request metadata naming the `authorization` value the server accepts: an RPC that carries
  /// it with another (or no) `authorization` fails with UNAUTHENTICATED, as a server does when a
  /// token was revoked or rotated, so tests can exercise token refresh.
  public static let requiredAuthorizationKey = "x-grpc-calls-required-authorization"

  /// Request metadata, in milliseconds: the failures that ``failAttemptsKey`` and
  /// ``requiredAuthorizationKey`` ask for carry a rich status whose `RetryInfo` asks the client
  /// to wait this long, as servers that send rich errors do.
  public static let retryDelayKey = "x-grpc-calls-retry-delay-ms"

  public init() {}

  /// TCP connections accepted since the server started.
  public var acceptedConnections: Int { self.state.withLock { $0.acceptedConnections } }

  /// TCP connections currently open.
  public var openConnections: Int { self.state.withLock { $0.openConnections } }

  /// Every RPC received, in arrival order.
  public var rpcs: [ReceivedRPC] { self.state.withLock { $0.rpcs } }

  /// Streamed response messages whose write completed (the server's writer returned): how far
  /// a server got before HTTP/2 flow control held it back.
  public var streamedResponses: Int { self.state.withLock { $0.streamedResponses } }

  /// The distinct client addresses (so connections) that RPCs arrived on.
  public var rpcPeers: Set<String> { Set(self.rpcs.map(\.peer)) }

  /// Forgets what was recorded (connection counts and RPCs).
  public func reset() {
    self.state.withLock { $0 = State(acceptedConnections: 0, openConnections: $0.openConnections) }
  }

  func connectionOpened() {
    self.state.withLock {
      $0.acceptedConnections += 1
      $0.openConnections += 1
    }
  }

  /// How many response streams the client ended: their writes failed before the last response,
  /// or their RPC was cancelled (the client's RST_STREAM reached the server; a graceful
  /// shutdown of the server counts too).
  ///
  /// Not the number of responses written: once the client has reset a stream, the transport
  /// may accept the handler's writes and drop them, so a handler can write its whole stream
  /// although only a window's worth went on the wire.
  public var streamsEndedEarly: Int { self.state.withLock { $0.streamsEndedEarly } }

  /// How many response streams the handler wrote to their end without seeing the client end
  /// them: with ``streamsEndedEarly`` and ``streamedResponses``, tells a test whose client
  /// cancelled whether the cancel reached the server at all.
  public var streamsCompleted: Int { self.state.withLock { $0.streamsCompleted } }

  /// When a handler last wrote a response stream to its end (see ``streamsCompleted``).
  public var lastStreamCompletion: ContinuousClock.Instant? {
    self.state.withLock { $0.lastStreamCompletion }
  }

  func streamCompleted() {
    self.state.withLock {
      $0.streamsCompleted += 1
      $0.lastStreamCompletion = .now
    }
  }

  func streamEndedEarly() {
    self.state.withLock { $0.streamsEndedEarly += 1 }
  }

  func streamedResponseWritten() {
    self.state.withLock { $0.streamedResponses += 1 }
  }

  /// Request metadata naming a call, so that a test can ask how its request stream ended
  /// (``requestStreamEnd(testID:)``); grpc-go's and grpcio's test servers under `interop/`
  /// record the same, as `ID METHOD OUTCOME` lines.
  public static let testIDKey = "x-grpc-calls-test-id"

  /// How the request stream of the call named `testID` (``testIDKey``) ended, as its handler
  /// saw it: `complete` (the client half-closed: END_STREAM) or `cancelled` (the stream was
  /// reset, or the RPC was cancelled); `nil` while the handler still reads.
  public func requestStreamEnd(testID: String) -> String? {
    self.state.withLock { $0.requestStreamEnds[testID] }
  }

  /// Whether the handler of the call named `testID` (``testIDKey``) has read a request message.
  public func readRequest(testID: String) -> Bool {
    self.state.withLock { $0.requestStreamsRead.contains(testID) }
  }

  /// Reads `messages` to their end, recording how they ended for a call with ``testIDKey``.
  func readRequests<Message: Sendable>(
    _ messages: RPCAsyncSequence<Message, any Error>,
    metadata: Metadata,
    _ body: (Message) async throws -> Void
  ) async throws {
    let testID = metadata[stringValues: Self.testIDKey].first(where: { _ in true })
    var iterator = messages.makeAsyncIterator()
    while true {
      let next: Message?
      do {
        next = try await iterator.next()
      } catch {
        if let testID {
          self.state.withLock { $0.requestStreamEnds[testID] = "cancelled" }
        }
        throw error
      }
      guard let message = next else { break }
      if let testID {
        self.state.withLock { _ = $0.requestStreamsRead.insert(testID) }
      }
      do {
        try await body(message)
      } catch {
        // The handler's own failure, or a cancel that reached it while it answered.
        if let testID, Task.isCancelled {
          self.state.withLock { $0.requestStreamEnds[testID] = "cancelled" }
        }
        throw error
      }
    }
    if let testID {
      // The handler task is cancelled with the stream: a loop that ended because of that did not
      // see the end of the requests.
      let outcome = Task.isCancelled ? "cancelled" : "complete"
      self.state.withLock { $0.requestStreamEnds[testID] = outcome }
    }
  }

  /// Counts an RPC with ``failAttemptsKey`` id `id`; returns its attempt number.
  func countAttempt(_ id: String) -> Int {
    self.state.withLock { state in
      state.attempts[id, default: 0] += 1
      return state.attempts[id]!
    }
  }

  /// How many RPCs carried ``failAttemptsKey`` id `id`.
  public func attempts(_ id: String) -> Int {
    self.state.withLock { $0.attempts[id] ?? 0 }
  }

  /// For each connection (client address), the most server-streaming responses it had under
  /// way at once: how many streams the client ran in parallel on it.
  public var mostRespondingStreamsPerConnection: [String: Int] {
    self.state.withLock { $0.mostRespondingStreams }
  }

  func respondingBegan(peer: String) {
    self.state.withLock {
      let now = $0.respondingStreams[peer, default: 0] + 1
      $0.respondingStreams[peer] = now
      $0.mostRespondingStreams[peer] = max(now, $0.mostRespondingStreams[peer] ?? 0)
    }
  }

  func respondingEnded(peer: String) {
    self.state.withLock { $0.respondingStreams[peer, default: 1] -= 1 }
  }

  func connectionClosed() {
    self.state.withLock { $0.openConnections -= 1 }
  }

  func received(_ context: ServerContext, metadata: Metadata) {
    let rpc = ReceivedRPC(
      method: context.descriptor.fullyQualifiedMethod,
      metadata: metadata,
      peer: context.remotePeer,
      arrival: .now
    )
    self.state.withLock { $0.rpcs.append(rpc) }
  }
}
