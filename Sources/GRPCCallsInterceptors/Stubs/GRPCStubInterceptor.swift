internal import Dispatch
public import GRPCCalls
internal import GRPCCore

/// One call's stub; made by ``GRPCStubInterceptorFactory``.
///
/// A stubbed call collects its requests until the half-close, then the stub works out its
/// answer in a task. Each part of the answer is sent to this interceptor's queue, so it is
/// ordered with the call's own events (demand, cancel); messages wait there for demand when
/// the call uses flow control.
public final class GRPCStubInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: the mutable state below is touched only on `dispatchQueue`: by the events,
  // which the manager runs there one at a time, and by the answer's parts, sent there too.
  private let factory: GRPCStubInterceptorFactory

  private enum Phase {
    case idle
    /// No stub: the call goes on to the transport.
    case passing
    /// A stub matched: holding the requests until the half-close.
    case collecting(GRPCStub)
    /// Sending the stub's answer.
    case answering(Task<Void, Never>)
    case closed
  }

  private enum Part {
    case headers(Metadata)
    case message(any Sendable)
    case close(Metadata, GRPCError?)
  }

  private var phase = Phase.idle
  private var path = ""
  private var metadata: Metadata = [:]
  private var requests: [any Sendable] = []
  private var flowControl = false
  private var demand = 0
  private var pending: [Part] = []

  init(manager: GRPCInterceptorManager, factory: GRPCStubInterceptorFactory) {
    self.factory = factory
    super.init(manager: manager)
  }

  public override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    self.path = requestOptions.path
    self.metadata = callOptions.initialMetadata
    self.flowControl = callOptions.enableFlowControl
    if let stub = self.factory.stubs[requestOptions.path] {
      self.phase = .collecting(stub)
    } else if self.factory.config.unmatched == .passThrough {
      self.phase = .passing
      super.start(requestOptions: requestOptions, callOptions: callOptions)
    } else {
      self.phase = .closed
      self.record(stubbed: false)
      self.manager.forwardPreviousInterceptorClose(
        trailingMetadata: nil,
        error: GRPCError(
          code: .unimplemented,
          message:
            "No stub for \(requestOptions.path): add a GRPCStub for it, or set the stub interceptor's unmatched calls to pass through"
        )
      )
      self.manager.shutDown()
    }
  }

  public override func writeData(_ data: any Sendable) {
    switch self.phase {
    case .passing:
      self.requests.append(data)
      super.writeData(data)
    case .collecting:
      self.requests.append(data)
      if self.flowControl {
        // The stub takes the message at once, as a transport with room would: a writer that
        // waits for `didWriteData` before its next write goes on.
        self.manager.forwardPreviousInterceptorDidWriteData()
      }
    case .idle, .answering, .closed:
      break
    }
  }

  public override func finish() {
    switch self.phase {
    case .passing:
      self.record(stubbed: false)
      super.finish()
    case .collecting(let stub):
      self.record(stubbed: true)
      self.phase = .answering(self.answer(with: stub))
    case .idle, .answering, .closed:
      break
    }
  }

  public override func receiveNextMessages(_ count: Int) {
    if case .passing = self.phase {
      super.receiveNextMessages(count)
      return
    }
    self.demand += count
    self.sendPending()
  }

  public override func cancel() {
    switch self.phase {
    case .passing:
      super.cancel()
    case .answering(let task):
      task.cancel()
      self.closeCancelled()
    case .idle, .collecting:
      self.closeCancelled()
    case .closed:
      break
    }
  }

  // MARK: The answer

  private func answer(with stub: GRPCStub) -> Task<Void, Never> {
    let (requests, metadata) = (self.requests, self.metadata)
    return Task {
      let response: GRPCStubResponse
      do {
        response = try await stub.answer(requests, metadata)
      } catch let error as GRPCError {
        response = .failure(error)
      } catch {
        response = .failure(
          GRPCError(
            code: .unknown,
            message: "The stub for \(stub.path) threw: \(error)",
            cause: error
          )
        )
      }
      self.send(.headers(response.headers))
      for step in response.steps {
        switch step.kind {
        case .message(let message):
          self.send(.message(message))
        case .pause(let duration):
          do {
            try await Task.sleep(for: duration)
          } catch {
            return  // Cancelled: the call closed already.
          }
        }
      }
      self.send(.close(response.trailers, response.error))
    }
  }

  private func send(_ part: Part) {
    self.dispatchQueue.async {
      guard case .answering = self.phase else { return }
      self.pending.append(part)
      self.sendPending()
    }
  }

  /// Passes on what the stub answered so far; a message waits for demand under flow control.
  private func sendPending() {
    guard case .answering = self.phase else { return }
    while let part = self.pending.first {
      switch part {
      case .headers(let headers):
        self.manager.forwardPreviousInterceptor(initialMetadata: headers)
      case .message(let message):
        if self.flowControl {
          guard self.demand > 0 else { return }
          self.demand -= 1
        }
        self.manager.forwardPreviousInterceptor(data: message)
      case .close(let trailers, let error):
        self.phase = .closed
        self.pending = []
        self.manager.forwardPreviousInterceptorClose(trailingMetadata: trailers, error: error)
        self.manager.shutDown()
        return
      }
      self.pending.removeFirst()
    }
  }

  private func closeCancelled() {
    self.phase = .closed
    self.pending = []
    self.manager.forwardPreviousInterceptorClose(
      trailingMetadata: nil,
      error: GRPCError(code: .cancelled, message: "Canceled")
    )
    self.manager.shutDown()
  }

  private func record(stubbed: Bool) {
    self.factory.log.append(
      GRPCStubbedRequest(
        path: self.path,
        metadata: self.metadata,
        messages: self.requests,
        stubbed: stubbed
      )
    )
  }
}
