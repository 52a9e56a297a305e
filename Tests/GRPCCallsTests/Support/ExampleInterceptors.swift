import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCore
import SwiftProtobuf

/// Rewrites the request and call options the rest of the chain starts with.
final class StartRewritingInterceptor: GRPCInterceptor, @unchecked Sendable {
  typealias Rewrite = @Sendable (inout GRPCRequestOptions, inout GRPCCallOptions) -> Void
  private let rewrite: Rewrite

  init(manager: GRPCInterceptorManager, rewrite: @escaping Rewrite) {
    self.rewrite = rewrite
    super.init(manager: manager)
  }

  /// A factory making one per call.
  static func factory(_ rewrite: @escaping Rewrite) -> GRPCClosureInterceptorFactory {
    GRPCClosureInterceptorFactory { StartRewritingInterceptor(manager: $0, rewrite: rewrite) }
  }

  override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    var requestOptions = requestOptions
    var callOptions = callOptions
    self.rewrite(&requestOptions, &callOptions)
    super.start(requestOptions: requestOptions, callOptions: callOptions)
  }
}

final class HijackCounter: Sendable {
  private let count = LockedValue(0)
  var fabricated: Int { self.count.withLock { $0 } }
  func add() { self.count.withLock { $0 += 1 } }
}

/// Lets the first round reach the server, then cancels the real call and answers the rest of
/// the ping-pong itself.
final class HijackingInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: `hijacked` is touched only by this interceptor's events.
  private let counter: HijackCounter
  private var hijacked = false

  init(manager: GRPCInterceptorManager, counter: HijackCounter) {
    self.counter = counter
    super.init(manager: manager)
  }

  override func didReceiveData(_ data: any Sendable) {
    super.didReceiveData(data)
    if !self.hijacked {
      self.hijacked = true
      self.manager.cancelNextInterceptor()
    }
  }

  override func writeData(_ data: any Sendable) {
    guard self.hijacked else { return super.writeData(data) }
    guard let bytes = data as? Data,
      let request = try? Grpc_Testing_StreamingOutputCallRequest(serializedBytes: bytes),
      let size = request.responseParameters.first?.size
    else { return }
    var response = Grpc_Testing_StreamingOutputCallResponse()
    response.payload.body = Data(count: Int(size))
    guard let answer = try? response.serializedData() else { return }
    self.counter.add()
    self.manager.forwardPreviousInterceptor(data: answer)
  }

  override func finish() {
    guard self.hijacked else { return super.finish() }
    self.manager.forwardPreviousInterceptorClose(trailingMetadata: [:], error: nil)
    self.manager.shutDown()
  }

  override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    // Once hijacked, the real call's CANCELLED close is this interceptor's business only.
    guard !self.hijacked else { return }
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }
}

/// Answers every call from a cache: nothing is passed on, so nothing reaches the network.
final class CacheInterceptor: GRPCInterceptor, @unchecked Sendable {
  private let cached: Data

  init(manager: GRPCInterceptorManager, cached: Data) {
    self.cached = cached
    super.init(manager: manager)
  }

  override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {}

  override func writeData(_ data: any Sendable) {}

  override func finish() {
    self.manager.forwardPreviousInterceptor(initialMetadata: ["x-cache": "hit"])
    self.manager.forwardPreviousInterceptor(data: self.cached)
    self.manager.forwardPreviousInterceptorClose(trailingMetadata: [:], error: nil)
    self.manager.shutDown()
  }
}

/// Changes the typed request's response size.
final class ResizingInterceptor: GRPCInterceptor, @unchecked Sendable {
  static let size = 314

  override func writeData(_ data: any Sendable) {
    guard var request = data as? Grpc_Testing_SimpleRequest else { return super.writeData(data) }
    request.responseSize = Int32(Self.size)
    super.writeData(request)
  }
}

/// Sends raw bytes and fails to parse every response.
struct RejectingMarshaller: GRPCMarshaller {
  struct Rejected: Error {}

  func serialize(_ message: any Sendable) throws -> Data {
    message as? Data ?? Data()
  }

  func deserialize(_ data: Data) throws -> any Sendable {
    throw Rejected()
  }
}

/// Retries a call that fails with UNAVAILABLE, holding responses back until an attempt ends.
final class RetryingInterceptor: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: every property is touched only by this interceptor's events.
  private let maxAttempts: Int
  private(set) var attempts = 0
  private var started: (GRPCRequestOptions, GRPCCallOptions)?
  private var writes: [any Sendable] = []
  private var finished = false
  private var headers: Metadata?
  private var messages: [any Sendable] = []

  init(manager: GRPCInterceptorManager, maxAttempts: Int) {
    self.maxAttempts = maxAttempts
    super.init(manager: manager)
  }

  override func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions) {
    self.started = (requestOptions, callOptions)
    self.attempts = 1
    super.start(requestOptions: requestOptions, callOptions: callOptions)
  }

  override func writeData(_ data: any Sendable) {
    self.writes.append(data)
    super.writeData(data)
  }

  override func finish() {
    self.finished = true
    super.finish()
  }

  override func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.headers = initialMetadata
  }

  override func didReceiveData(_ data: any Sendable) {
    self.messages.append(data)
  }

  override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    if error?.code == .unavailable, self.attempts < self.maxAttempts,
      let (request, options) = self.started
    {
      self.attempts += 1
      self.headers = nil
      self.messages = []
      self.manager.resetNextInterceptor()
      self.manager.startNextInterceptor(requestOptions: request, callOptions: options)
      for write in self.writes {
        self.manager.writeNextInterceptor(write)
      }
      if self.finished {
        self.manager.finishNextInterceptor()
      }
      return
    }
    if let headers = self.headers {
      self.manager.forwardPreviousInterceptor(initialMetadata: headers)
    }
    for message in self.messages {
      self.manager.forwardPreviousInterceptor(data: message)
    }
    super.didClose(trailingMetadata: trailingMetadata, error: error)
  }
}
