internal import Foundation
public import GRPCCalls
public import GRPCCore

/// One call's cache lookup; made by ``GRPCResponseCacheInterceptorFactory``.
///
/// A cacheable call is held until its request is complete (one message and the half-close),
/// since the request is part of the key. On a hit the interceptor answers the call itself and
/// nothing below it is made; on a miss it passes the call on and keeps the response.
public final class GRPCResponseCacheInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: the mutable state below is touched only by this interceptor's events, which
  // its manager runs one at a time.
  private let factory: GRPCResponseCacheInterceptorFactory

  private enum Phase {
    /// Not cacheable: every event passes.
    case passing
    /// Cacheable: holding the start and the request until the half-close.
    case holding(GRPCRequestOptions, GRPCCallOptions, request: (any Sendable)?)
    /// Answered from the cache; with flow control, waiting for the application's demand.
    case answering(ResponseCache.Entry)
    /// Passed on after a miss; keeping the response.
    case recording(ResponseCache.Key, Recorded)
    case done
  }

  private struct Recorded {
    var headers: Metadata = [:]
    var messages: [any Sendable] = []
  }

  private var phase = Phase.passing
  private var marshaller: (any GRPCMarshaller)?
  private var flowControl = false
  private var demand = 0

  init(manager: GRPCInterceptorManager, factory: GRPCResponseCacheInterceptorFactory) {
    self.factory = factory
    super.init(manager: manager, executesInline: factory.config.executesInline)
  }

  public override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    let cacheable =
      requestOptions.safety == .cacheable
      || self.factory.config.cachedPaths.contains(requestOptions.path)
    guard cacheable else {
      super.start(requestOptions: requestOptions, callOptions: callOptions)
      return
    }
    self.marshaller = callOptions.marshaller
    self.flowControl = callOptions.enableFlowControl
    self.phase = .holding(requestOptions, callOptions, request: nil)
  }

  public override func writeData(_ data: any Sendable) {
    guard case .holding(let request, let call, let held) = self.phase else {
      super.writeData(data)
      return
    }
    if let held {
      // A second message: not a unary request, so not cached.
      self.passHeld(request, call, writes: [held, data], finish: false)
    } else {
      self.phase = .holding(request, call, request: data)
    }
  }

  public override func finish() {
    guard case .holding(let request, let call, let held) = self.phase else {
      super.finish()
      return
    }
    guard let held, let key = self.key(request, call, message: held) else {
      self.passHeld(request, call, writes: held.map { [$0] } ?? [], finish: true)
      return
    }
    if let entry = self.factory.cache.entry(for: key, at: self.factory.now()) {
      self.phase = .answering(entry)
      self.manager.forwardPreviousInterceptor(initialMetadata: entry.headers)
      self.answerIfAsked()
    } else {
      self.passHeld(request, call, writes: [held], finish: true)
      self.phase = .recording(key, Recorded())
    }
  }

  public override func receiveNextMessages(_ count: Int) {
    switch self.phase {
    case .holding:
      self.demand += count
    case .answering:
      self.demand += count
      self.answerIfAsked()
    case .passing, .recording, .done:
      super.receiveNextMessages(count)
    }
  }

  public override func cancel() {
    self.phase = .done
    super.cancel()
  }

  public override func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    if case .recording(let key, var recorded) = self.phase {
      recorded.headers = initialMetadata
      self.phase = .recording(key, recorded)
    }
    super.didReceiveInitialMetadata(initialMetadata)
  }

  public override func didReceiveData(_ data: any Sendable) {
    if case .recording(let key, var recorded) = self.phase {
      recorded.messages.append(data)
      self.phase = .recording(key, recorded)
    }
    super.didReceiveData(data)
  }

  public override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    if case .recording(let key, let recorded) = self.phase, error == nil,
      recorded.messages.count == 1
    {
      self.keep(recorded, trailers: trailingMetadata ?? [:], for: key)
    }
    self.phase = .done
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }

  // MARK: Helpers

  private func key(
    _ request: GRPCRequestOptions,
    _ call: GRPCCallOptions,
    message: any Sendable
  ) -> ResponseCache.Key? {
    let bytes: Data
    if let data = message as? Data {
      bytes = data
    } else if let marshaller = self.marshaller, let data = try? marshaller.serialize(message) {
      bytes = data
    } else {
      return nil
    }
    let metadata = self.factory.config.keyMetadata.map { key in
      Array(call.initialMetadata[stringValues: key]).joined(separator: ",")
    }
    return ResponseCache.Key(path: request.path, request: bytes, metadata: metadata)
  }

  private func passHeld(
    _ request: GRPCRequestOptions,
    _ call: GRPCCallOptions,
    writes: [any Sendable],
    finish: Bool
  ) {
    self.phase = .passing
    self.manager.startNextInterceptor(requestOptions: request, callOptions: call)
    for write in writes {
      self.manager.writeNextInterceptor(write)
    }
    if finish {
      self.manager.finishNextInterceptor()
    }
    if self.demand > 0 {
      self.manager.receiveNextInterceptorMessages(self.demand)
    }
  }

  /// Delivers the cached message and the close, once flow control allows.
  private func answerIfAsked() {
    guard case .answering(let entry) = self.phase, !self.flowControl || self.demand > 0 else {
      return
    }
    self.phase = .done
    self.manager.forwardPreviousInterceptor(data: entry.message)
    self.manager.forwardPreviousInterceptorClose(trailingMetadata: entry.trailers, error: nil)
    self.manager.shutDown()
  }

  private func keep(_ recorded: Recorded, trailers: Metadata, for key: ResponseCache.Key) {
    let lifetime =
      CacheControl.lifetime(headers: recorded.headers, trailers: trailers)
      ?? self.factory.config.defaultLifetime
    guard let lifetime, lifetime > 0, let message = recorded.messages.first else { return }
    let entry = ResponseCache.Entry(
      headers: recorded.headers,
      message: message,
      trailers: trailers,
      bytes: MessageTally.size(of: message, marshaller: self.marshaller) ?? key.request.count,
      expiresAt: self.factory.now().addingTimeInterval(lifetime)
    )
    self.factory.cache.store(entry, for: key)
  }
}
