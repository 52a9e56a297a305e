extension GRPCInterceptorManager {
  /// Which events one interceptor may pass on, free of I/O.
  ///
  /// Requests (towards the transport):
  /// ```
  ///  ┌─────────────┐  start  ┌─────────┐  finish  ┌─────────────┐
  ///  │ initialized │ ──────▶ │ started │ ───────▶ │ half-closed │
  ///  └─────────────┘         └─────────┘          └─────────────┘
  ///        │ cancel              │ cancel               │ cancel
  ///        └─────────────────────┴──────────────────────┴───────▶ ┌───────────┐
  ///                                                                │ cancelled │
  ///                                                                └───────────┘
  /// ```
  /// `write` passes only in `started`; `receiveNextMessages` in every state but `cancelled`.
  ///
  /// Responses (towards the application): initial metadata at most once and before any message;
  /// messages and write acknowledgements until the close; the close once. After the close, or
  /// after ``shutDown()``, nothing passes in either direction but a cancel that was not yet sent.
  ///
  /// A retry (``GRPCInterceptorManager/resetNextInterceptor()``) takes the request side back to
  /// `initialized`.
  ///
  /// Whatever does not pass is dropped: misuse by an interceptor is a defined no-op.
  struct StateMachine: Sendable {
    enum RequestPhase: Sendable, Equatable {
      case initialized
      case started
      case halfClosed
      case cancelled
    }

    enum Request: Sendable {
      case start
      case write
      case finish
      case cancel
      case receiveNextMessages
    }

    enum Response: Sendable {
      case initialMetadata
      case message
      case didWrite
      case close
    }

    private(set) var requestPhase: RequestPhase = .initialized
    private(set) var sentInitialMetadata = false
    private(set) var sentMessage = false
    private(set) var closed = false
    private(set) var isShutDown = false

    /// Whether a request may be passed to the next element; moves the request phase on.
    mutating func pass(_ request: Request) -> Bool {
      if self.isShutDown || self.closed {
        // A call that ended may still tell the elements below it to stop.
        guard case .cancel = request, self.requestPhase != .cancelled else { return false }
        self.requestPhase = .cancelled
        return true
      }
      switch (request, self.requestPhase) {
      case (.start, .initialized):
        self.requestPhase = .started
        return true
      case (.write, .started):
        return true
      case (.finish, .started):
        self.requestPhase = .halfClosed
        return true
      case (.cancel, .initialized), (.cancel, .started), (.cancel, .halfClosed):
        self.requestPhase = .cancelled
        return true
      case (.receiveNextMessages, .initialized), (.receiveNextMessages, .started),
        (.receiveNextMessages, .halfClosed):
        return true
      default:
        return false
      }
    }

    /// Whether a response may be passed to the previous element; records it.
    mutating func pass(_ response: Response) -> Bool {
      guard !self.closed, !self.isShutDown else { return false }
      switch response {
      case .initialMetadata:
        guard !self.sentInitialMetadata, !self.sentMessage else { return false }
        self.sentInitialMetadata = true
      case .message:
        self.sentMessage = true
      case .didWrite:
        break
      case .close:
        self.closed = true
      }
      return true
    }

    /// A retry: the elements below are made anew, so requests start over. Ignored once the
    /// call has closed or shut down.
    mutating func restartRequests() {
      guard !self.closed, !self.isShutDown else { return }
      self.requestPhase = .initialized
    }

    /// The interceptor is done: nothing reaches it, or passes through it, any more.
    mutating func shutDown() {
      self.isShutDown = true
    }
  }
}
