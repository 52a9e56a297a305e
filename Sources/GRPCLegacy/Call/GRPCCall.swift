public import Dispatch
public import Foundation
public import GRPCCalls
public import GRPCCore

/// gRPC Objective-C's v1 call: a ``GRXWriter`` of response messages (`Data`) that reads its
/// requests from another writer; each one runs as a `GRPCCall2`.
///
/// ```swift
/// let call = GRPCCall(
///   host: "localhost:50051",
///   path: "/grpc.testing.TestService/UnaryCall",
///   requestsWriter: GRXWriter(value: try request.serializedData())
/// )
/// call.requestHeaders.addString("value", forKey: "x-key")
/// call.start(with: GRXHandlerWriteable(singleHandler: { response, error in … }))
/// ```
///
/// With `callOptions` `nil` the call runs with its host's settings (``GRPCHost``), read when it
/// starts; otherwise with those options. The properties set before ``GRXWriter/start(with:)``
/// (``requestHeaders``, ``timeout``, ``serverName``, ``oauth2AccessToken``, ``tokenProvider``)
/// apply on top of either. Responses are read with flow control: pausing the call
/// (`state = .paused`) stops reading from the server until it resumes, and the requests writer
/// is paused until each request has been accepted by the transport.
///
/// Responses arrive on ``setResponseDispatchQueue(_:)``'s queue: by default the main queue on
/// Apple platforms, as in gRPC Objective-C, and a serial queue of the library's on Linux, where
/// nothing services the main queue unless the app runs it.
public class GRPCCall: GRXWriter, @unchecked Sendable {
  // @unchecked: mutable state is in `state` behind its lock; GRXWriter's is behind its own.

  /// The server, as given.
  public let host: String
  /// The method's path, `/package.Service/Method`.
  public let path: String
  public let callSafety: GRPCCallSafety
  private let requestsWriter: GRXWriter
  private let explicitOptions: GRPCCallOptions?
  private let channelPool: GRPCChannelPool
  /// Set by ``GRPCProtoCall``: requests are messages, responses parsed as this type.
  private let protobuf: V1ProtobufMarshaller?
  private let locked = LockedValue(Locked())

  private struct Locked {
    var requestHeaders = Metadata()
    var timeout: TimeInterval = 0
    var serverName: String?
    var oauth2AccessToken: String?
    var tokenProvider: (any GRPCAuthorizationProvider)?
    var responseQueue: DispatchQueue = GRPCCall.defaultResponseQueue
    var responseHeaders: Metadata?
    var responseTrailers: Metadata?
    var call: GRPCCall2?
    var started = false
    /// The writeable paused the call: no response demand until it resumes.
    var paused = false
    /// A response demand is owed for when the writer resumes.
    var demandOwed = false
  }

  #if canImport(Darwin)
  static var defaultResponseQueue: DispatchQueue { .main }
  #else
  static let defaultResponseQueue = DispatchQueue(label: "grpc-calls.legacy.responses")
  #endif

  /// Creates a call; nothing is sent until ``GRXWriter/start(with:)``.
  ///
  /// - Parameters:
  ///   - host: The server: `name[:port]` or a target with a scheme.
  ///   - path: The method's path.
  ///   - callSafety: The method's safety.
  ///   - requestsWriter: The requests, as `Data`; started when the call starts. A writer that
  ///     was already started or finished fails the call with `FAILED_PRECONDITION`.
  ///   - callOptions: The call's options; `nil` uses the host's settings.
  ///   - channelPool: The pool to take the channel from.
  public init(
    host: String,
    path: String,
    callSafety: GRPCCallSafety = .default,
    requestsWriter: GRXWriter,
    callOptions: GRPCCallOptions? = nil,
    channelPool: GRPCChannelPool = .shared
  ) {
    self.host = host
    self.path = path
    self.callSafety = callSafety
    self.requestsWriter = requestsWriter
    self.explicitOptions = callOptions
    self.channelPool = channelPool
    self.protobuf = nil
    super.init()
  }

  /// A call whose requests are protobuf messages and whose responses are parsed as
  /// `marshaller`'s response type (``GRPCProtoCall``).
  init(
    host: String,
    path: String,
    callSafety: GRPCCallSafety,
    requestsWriter: GRXWriter,
    callOptions: GRPCCallOptions?,
    channelPool: GRPCChannelPool,
    protobuf: V1ProtobufMarshaller
  ) {
    self.host = host
    self.path = path
    self.callSafety = callSafety
    self.requestsWriter = requestsWriter
    self.explicitOptions = callOptions
    self.channelPool = channelPool
    self.protobuf = protobuf
    super.init()
  }

  /// Metadata sent with the request; changes after the call started are ignored.
  public var requestHeaders: Metadata {
    get { self.locked.withLock { $0.requestHeaders } }
    set { self.locked.withLock { if !$0.started { $0.requestHeaders = newValue } } }
  }

  /// The response headers, once they arrived (readable from the writeable's callbacks).
  public var responseHeaders: Metadata? { self.locked.withLock { $0.responseHeaders } }

  /// The trailers, once the call closed with them; `nil` when it ended on this side.
  public var responseTrailers: Metadata? { self.locked.withLock { $0.responseTrailers } }

  /// The deadline in seconds from the start; `0` keeps the options' (none by default).
  public var timeout: TimeInterval {
    get { self.locked.withLock { $0.timeout } }
    set { self.locked.withLock { if !$0.started { $0.timeout = max(0, newValue) } } }
  }

  /// The `:authority` to send, when it is not the host.
  public var serverName: String? {
    get { self.locked.withLock { $0.serverName } }
    set { self.locked.withLock { if !$0.started { $0.serverName = newValue } } }
  }

  /// Sent as `authorization: Bearer <token>`.
  public var oauth2AccessToken: String? {
    get { self.locked.withLock { $0.oauth2AccessToken } }
    set { self.locked.withLock { if !$0.started { $0.oauth2AccessToken = newValue } } }
  }

  /// Asked for a token when the call starts.
  public var tokenProvider: (any GRPCAuthorizationProvider)? {
    get { self.locked.withLock { $0.tokenProvider } }
    set { self.locked.withLock { if !$0.started { $0.tokenProvider = newValue } } }
  }

  /// The queue the response writeable's callbacks run on; ignored once the call started.
  public func setResponseDispatchQueue(_ queue: DispatchQueue) {
    self.locked.withLock { if !$0.started { $0.responseQueue = queue } }
  }

  /// Cancels the call: the writeable gets `CANCELLED` (1) "Canceled by app" on the response
  /// queue unless it had finished, and the requests writer is stopped. The call's
  /// ``GRXWriter/state`` is `.finished` when this returns, as in gRPC Objective-C.
  public func cancel() {
    let (call, queue) = self.locked.withLock { ($0.call, $0.responseQueue) }
    self.finishNow(withError: GRPCError(code: .cancelled, message: "Canceled by app"), on: queue)
    call?.cancel()
    self.requestsWriter.state = .finished
  }

  public override func writerStateDidChange(_ state: GRXWriterState) {
    switch state {
    case .started:
      let (call, start, owed) = self.locked.withLock { locked -> (GRPCCall2?, Bool, Bool) in
        locked.paused = false
        if !locked.started {
          locked.started = true
          return (nil, true, false)
        }
        defer { locked.demandOwed = false }
        return (locked.call, false, locked.demandOwed)
      }
      if start {
        self.startCall()
      } else if owed {
        call?.receiveNextMessages(1)
      }
    case .paused:
      self.locked.withLock { $0.paused = true }
    case .finished:
      // Finished by hand: the caller wants nothing more; end the RPC too.
      self.cancel()
    case .notStarted:
      break
    }
  }

  private func startCall() {
    let options: GRPCCallOptions
    let requestOptions: GRPCRequestOptions
    do {
      requestOptions = try GRPCRequestOptions(
        host: self.host,
        path: self.path,
        safety: self.callSafety
      )
      options = try self.effectiveOptions()
    } catch {
      self.finish(withError: error)
      return
    }
    let queue = self.locked.withLock { $0.responseQueue }
    let call = GRPCCall2(
      requestOptions: requestOptions,
      responseHandler: ResponseHandler(owner: self, queue: queue),
      callOptions: options,
      channelPool: self.channelPool
    )
    self.locked.withLock { $0.call = call }
    call.receiveNextMessages(1)
    // The requests writer starts first: an RPC that fails at once (a channel backing off)
    // stops it, and a writer started after that would fail the call with its own error.
    // Requests it writes before the RPC starts wait in the call.
    self.requestsWriter.start(with: RequestsWriteable(owner: self))
    call.start()
  }

  /// The options the RPC runs with: the explicit ones or the host's, then this call's own.
  private func effectiveOptions() throws -> GRPCCallOptions {
    var options = try self.explicitOptions ?? GRPCHost.callOptions(forHost: self.host)
    options.enableFlowControl = true
    if let protobuf = self.protobuf {
      options.marshaller = protobuf
    }
    self.locked.withLock { locked in
      options.initialMetadata.add(contentsOf: locked.requestHeaders)
      if locked.timeout > 0 { options.timeout = locked.timeout }
      if let name = locked.serverName { options.serverAuthority = name }
      if let token = locked.oauth2AccessToken { options.oauth2AccessToken = token }
      if let provider = locked.tokenProvider { options.authTokenProvider = provider }
    }
    return options
  }

  // MARK: - Events from the RPC and the requests writer

  fileprivate func received(headers: Metadata) {
    self.locked.withLock { $0.responseHeaders = headers }
  }

  fileprivate func received(message: any Sendable) {
    self.emit(message)
    // One message at a time: ask for the next unless the writeable paused the call.
    let call = self.locked.withLock { locked -> GRPCCall2? in
      guard !locked.paused else {
        locked.demandOwed = true
        return nil
      }
      return locked.call
    }
    call?.receiveNextMessages(1)
  }

  fileprivate func closed(trailers: Metadata?, error: GRPCError?) {
    self.locked.withLock {
      $0.responseTrailers = trailers
      $0.call = nil
    }
    self.requestsWriter.state = .finished
    self.emitFinish(withError: error)
  }

  fileprivate func wroteRequest() {
    self.requestsWriter.state = .started
  }

  fileprivate func request(_ value: any Sendable) {
    let call = self.locked.withLock { $0.call }
    // Held until the transport takes it (`wroteRequest`): a fast writer cannot pile up.
    self.requestsWriter.state = .paused
    call?.writeData(value)
  }

  fileprivate func requestsFinished(error: (any Error)?) {
    let call = self.locked.withLock { $0.call }
    guard let error else {
      call?.finish()
      return
    }
    // The requests failed: end the call with their error; the RPC's own close is then ignored.
    self.finish(withError: error)
    call?.cancel()
  }
}

/// The RPC's handler: hands each event to the v1 call on the response queue.
private struct ResponseHandler: GRPCResponseHandler {
  let owner: GRPCCall
  let dispatchQueue: DispatchQueue

  init(owner: GRPCCall, queue: DispatchQueue) {
    self.owner = owner
    self.dispatchQueue = queue
  }

  func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.owner.received(headers: initialMetadata)
  }

  func didReceiveData(_ data: any Sendable) {
    self.owner.received(message: data)
  }

  func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.owner.closed(trailers: trailingMetadata, error: error)
  }

  func didWriteData() {
    self.owner.wroteRequest()
  }
}

/// What the requests writer writes to: each value goes to the RPC.
private final class RequestsWriteable: GRXWriteable {
  let owner: GRPCCall

  init(owner: GRPCCall) {
    self.owner = owner
  }

  func writeValue(_ value: any Sendable) {
    self.owner.request(value)
  }

  func writesFinished(withError error: (any Error)?) {
    self.owner.requestsFinished(error: error)
  }
}
