public import Dispatch
public import GRPCCalls
public import GRPCCore
public import SwiftProtobuf

/// A proto handler made of one closure, for unary-style calls: it gets the response (or the
/// error) once, when the call closes. The response headers and trailers stay readable.
///
/// ```swift
/// let handler = GRPCUnaryResponseHandler<Grpc_Testing_SimpleResponse>(queue: .main) { response, error in
///   print(response?.payload.body.count ?? 0, error?.message ?? "OK")
/// }
/// ```
public final class GRPCUnaryResponseHandler<Response: SwiftProtobuf.Message>:
  GRPCProtoResponseHandler,
  GRPCTypedResponseHandler
{
  public let dispatchQueue: DispatchQueue
  private let completion: @Sendable (Response?, GRPCError?) -> Void
  private let state = LockedValue<(headers: Metadata?, trailers: Metadata?, response: Response?)>(
    (nil, nil, nil)
  )

  /// Creates a handler.
  ///
  /// - Parameters:
  ///   - queue: The queue `completion` runs on: the main queue by default, as gRPC
  ///     Objective-C's `responseDispatchQueue:nil` meant (on Linux something must service it:
  ///     an async `main`, `dispatchMain()` or a run loop).
  ///   - completion: Called once at the close: the response and no error on success; no
  ///     response and the error on failure.
  public init(
    queue: DispatchQueue = .main,
    completion: @escaping @Sendable (Response?, GRPCError?) -> Void
  ) {
    self.dispatchQueue = queue
    self.completion = completion
  }

  /// The response headers, once they arrived.
  public var responseHeaders: Metadata? { self.state.withLock { $0.headers } }

  /// The trailers, once the call closed with them.
  public var responseTrailers: Metadata? { self.state.withLock { $0.trailers } }

  public func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.state.withLock { $0.headers = initialMetadata }
  }

  public func didReceiveProtoMessage(_ message: any SwiftProtobuf.Message) {
    if let message = message as? Response { self.didReceiveMessage(message) }
  }

  public func didReceiveMessage(_ message: Response) {
    // A unary-style call keeps the first response.
    self.state.withLock { state in
      if state.response == nil { state.response = message }
    }
  }

  public func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    let response = self.state.withLock { state in
      state.trailers = trailingMetadata
      return state.response
    }
    if let error {
      self.completion(nil, error)
    } else if let response {
      self.completion(response, nil)
    } else {
      self.completion(
        nil,
        GRPCError(code: .internalError, message: "The server closed the call without a response")
      )
    }
  }

  public func didWriteMessage() {}
}
