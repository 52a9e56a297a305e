public import Dispatch
public import GRPCCore

/// A response handler made of closures, for callers who would rather not write a type.
///
/// ```swift
/// let handler = GRPCCallbackResponseHandler(queue: .main) { data in
///   print("message:", data)
/// } onClose: { trailers, error in
///   print("closed:", error?.message ?? "OK")
/// }
/// ```
public struct GRPCCallbackResponseHandler: GRPCResponseHandler {
  public let dispatchQueue: DispatchQueue
  private let onInitialMetadata: @Sendable (Metadata) -> Void
  private let onData: @Sendable (any Sendable) -> Void
  private let onClose: @Sendable (Metadata?, GRPCError?) -> Void
  private let onWrite: @Sendable () -> Void

  /// Creates a handler.
  ///
  /// The order of the parameters lets the common case read naturally: an unlabeled trailing
  /// closure is `onData`, then `onClose:`, then the optional `onInitialMetadata:` and `onWrite:`.
  ///
  /// - Parameters:
  ///   - queue: The queue every closure runs on.
  ///   - onData: Called with each response message.
  ///   - onClose: Called once when the call closes, with the trailers and the error, if any.
  ///   - onInitialMetadata: Called with the response headers.
  ///   - onWrite: Called when the transport accepted a written message (flow control only).
  public init(
    queue: DispatchQueue,
    onData: @escaping @Sendable (any Sendable) -> Void = { _ in },
    onClose: @escaping @Sendable (Metadata?, GRPCError?) -> Void,
    onInitialMetadata: @escaping @Sendable (Metadata) -> Void = { _ in },
    onWrite: @escaping @Sendable () -> Void = {}
  ) {
    self.dispatchQueue = queue
    self.onInitialMetadata = onInitialMetadata
    self.onData = onData
    self.onClose = onClose
    self.onWrite = onWrite
  }

  public func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.onInitialMetadata(initialMetadata)
  }

  public func didReceiveData(_ data: any Sendable) {
    self.onData(data)
  }

  public func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.onClose(trailingMetadata, error)
  }

  public func didWriteData() {
    self.onWrite()
  }
}
