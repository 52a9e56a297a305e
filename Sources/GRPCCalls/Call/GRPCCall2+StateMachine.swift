extension GRPCCall2 {
  /// The request side of a call's lifecycle, free of I/O.
  ///
  /// ```
  ///            start                     finish
  ///  ┌──────┐ ───────▶ ┌─────────┐ ─────────────▶ ┌─────────────┐
  ///  │ idle │          │ started │                │ half-closed │
  ///  └──────┘          └─────────┘                └─────────────┘
  ///     │ cancel           │ cancel                      │ cancel
  ///     └──────────────────┴─────────────────────────────┴──────▶ ┌───────────┐
  ///                                                                │ cancelled │
  ///                                                                └───────────┘
  /// ```
  ///
  /// Writes and a finish before start are buffered and handed over by start, in order. Misuse
  /// (start twice, write after finish or cancel, finish twice) is a no-op. `cancelled` absorbs
  /// every event.
  struct StateMachine: Sendable {
    enum State: Sendable {
      case idle(Idle)
      case started
      case halfClosed
      case cancelled
    }

    struct Idle: Sendable {
      var bufferedWrites: [any Sendable] = []
      var finishRequested = false
    }

    enum Action: Sendable {
      case none
      /// Start the RPC, then send `writes` and, if `finish`, half-close.
      case startRPC(writes: [any Sendable], finish: Bool)
      case write(any Sendable)
      case finish
      /// Close the call as cancelled by the app, and cancel its chain (started or not, so that
      /// its interceptors end).
      case cancel
    }

    private(set) var state: State = .idle(Idle())

    mutating func start() -> Action {
      guard case .idle(let idle) = self.state else { return .none }
      self.state = idle.finishRequested ? .halfClosed : .started
      return .startRPC(writes: idle.bufferedWrites, finish: idle.finishRequested)
    }

    mutating func write(_ message: any Sendable) -> Action {
      switch self.state {
      case .idle(var idle):
        guard !idle.finishRequested else { return .none }
        idle.bufferedWrites.append(message)
        self.state = .idle(idle)
        return .none
      case .started:
        return .write(message)
      case .halfClosed, .cancelled:
        return .none
      }
    }

    mutating func finish() -> Action {
      switch self.state {
      case .idle(var idle):
        idle.finishRequested = true
        self.state = .idle(idle)
        return .none
      case .started:
        self.state = .halfClosed
        return .finish
      case .halfClosed, .cancelled:
        return .none
      }
    }

    mutating func cancel() -> Action {
      switch self.state {
      case .idle, .started, .halfClosed:
        self.state = .cancelled
        return .cancel
      case .cancelled:
        return .none
      }
    }
  }
}
