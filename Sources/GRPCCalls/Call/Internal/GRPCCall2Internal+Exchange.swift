internal import Foundation
internal import GRPCCore

// What the RPC asks of the runner while it runs: the requests to write, flow-control demand,
// and where its responses go.
extension GRPCCall2Internal {
  /// Serializes a request; a failure closes the call with its error before the core turns the
  /// throw into its own.
  func serialize(_ message: any Sendable, coder: MessageCoder) throws(GRPCError) -> Data {
    do {
      return try coder.serialize(message)
    } catch {
      self.close(trailers: nil, error: error)
      throw error
    }
  }

  /// Reports the writes of the requests known at the start, once per call: a transparent
  /// retry writes them again.
  func acknowledgeKnownWrites(_ count: Int) {
    if self.state.withLock({ $0.reportsKnownWrites() }) {
      self.acknowledgeWrites(count)
    }
  }

  /// Counts `count` accepted writes and reports them up the chain, under flow control.
  func acknowledgeWrites(_ count: Int) {
    guard self.state.withLock({ $0.sent(count) }) else { return }
    for _ in 0 ..< count {
      self.previous.didWrite()
    }
  }

  /// Counts a streamed request the transport accepted, and reports it up the chain under flow
  /// control unless an earlier attempt did (a transparent retry sends it again).
  func acknowledgeStreamedWrite() {
    let report = self.state.withLock { $0.acceptedWrite() }
    if report {
      self.acknowledgeWrites(1)
    }
  }

  /// Writes each streamed request through `write` as the application sends it, on either path
  /// to the core, until the application finishes; reports each the transport accepted.
  ///
  /// - Throws: What `write` throws, a request that does not serialize, or `CancellationError`
  ///   when the call was cancelled (``nextRequest()``).
  func writeStreamedRequests(
    coder: MessageCoder,
    through write: (Data) async throws -> Void
  ) async throws {
    while let message = try await self.nextRequest() {
      let bytes = try self.serialize(message, coder: coder)
      // Noted for a transparent retry, which sends the requests again if they fit.
      self.state.withLock { $0.tookRequestBytes(bytes.count) }
      // The writer returns once the transport accepted the message (on the GRPCClient path with
      // a retry or hedging policy, once the executor buffered it for its attempts): that is
      // what didWriteData reports under flow control.
      try await write(bytes)
      self.acknowledgeStreamedWrite()
    }
  }

  /// The next request to send, waiting for one; `nil` when the request side is over.
  ///
  /// - Throws: `CancellationError` when the call was cancelled (by the application, its
  ///   deadline or its task), or its RPC ended before the application finished: the writer then ends the stream with a reset (RST_STREAM CANCEL),
  ///   never with END_STREAM, so the server sees a cancellation and not a complete request
  ///   stream (gRPC's HTTP/2 protocol; gRFC A6 and grpc-go do the same).
  func nextRequest() async throws -> (any Sendable)? {
    while true {
      switch self.state.withLock({ $0.nextRequest() }) {
      case .message(let message): return message
      case .reset: throw CancellationError()
      case .end: return nil
      case .wait: break
      }
      await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
          // Parked only while there is still nothing to take; otherwise look again at once.
          if !self.state.withLock({ $0.parkWriter(continuation) }) {
            continuation.resume()
          }
        }
      } onCancel: {
        self.endRequests()
      }
    }
  }

  /// What a response message found when it asked for demand (flow control).
  enum DemandOutcome: Sendable, Equatable {
    /// The application had asked for it already.
    case available
    /// It waited for the application to ask: the application reads slower than the server
    /// sends.
    case waited
    /// The call was cancelled meanwhile.
    case cancelled
  }

  /// Waits for a unit of demand before a response message goes up (flow control).
  func takeDemand() async -> DemandOutcome {
    if let ready = self.state.withLock({ $0.takeDemand(reader: nil) }) {
      return ready ? .available : .cancelled
    }
    let ready = await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
        if let ready = self.state.withLock({ $0.takeDemand(reader: continuation) }) {
          continuation.resume(returning: ready)
        }
      }
    } onCancel: {
      self.endRequests()
    }
    return ready ? .waited : .cancelled
  }

  /// Whether a stream that has delivered `delivered` response messages floods the client
  /// (``StateMachine/floodsClient(responses:)``).
  func floodsClient(delivered: Int) -> Bool {
    self.state.withLock { $0.floodsClient(responses: delivered) }
  }

  /// Whether response messages wait for demand.
  var isFlowControlled: Bool {
    self.state.withLock { $0.flowControl }
  }

  /// Wakes a waiting writer and reader: the RPC is over or its task was cancelled.
  func endRequests() {
    let (writer, reader) = self.state.withLock { $0.endRequests() }
    writer?.resume()
    reader?.resume(returning: false)
  }

  /// The response headers, up the chain.
  func deliver(initialMetadata: Metadata) {
    self.state.withLock { $0.deliversResponse() }
    self.previous.initialMetadata(initialMetadata)
  }

  /// A response message, up the chain.
  ///
  /// - Parameter withinDeliveryQueue: Whether the caller runs within the queue of the element
  ///   above (``DeliveryQueueExecutor``), which may then take the message where it is.
  func deliver(message: any Sendable, withinDeliveryQueue: Bool = false) {
    self.state.withLock { $0.deliversResponse() }
    self.previous.receive(.message(message), withinDeliveryQueue: withinDeliveryQueue)
  }
}
