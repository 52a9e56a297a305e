public import Dispatch
public import GRPCCore

/// Receives the responses of a call on a dispatch queue of its choosing.
///
/// Every callback runs on ``dispatchQueue``, in the order: initial metadata, then messages, then
/// close. ``didClose(trailingMetadata:error:)`` runs exactly once and nothing runs after it. The
/// queue need not be serial: the library delivers one call's callbacks one at a time.
///
/// Every callback has a default that does nothing, so implement only those you need:
///
/// ```swift
/// final class PrintingHandler: GRPCResponseHandler {
///   let dispatchQueue = DispatchQueue(label: "responses")
///
///   func didReceiveData(_ data: any Sendable) {
///     print("message:", data as! Data)
///   }
///
///   func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
///     print("closed:", error.map(String.init(describing:)) ?? "OK")
///   }
/// }
/// ```
public protocol GRPCResponseHandler: Sendable {
  /// The queue the callbacks run on.
  var dispatchQueue: DispatchQueue { get }

  /// The response headers arrived. Not called when the server answers with trailers only.
  func didReceiveInitialMetadata(_ initialMetadata: Metadata)

  /// A response message arrived: `Data` for raw calls.
  func didReceiveData(_ data: any Sendable)

  /// The call closed: `error` is `nil` on success.
  ///
  /// - Parameters:
  ///   - trailingMetadata: The trailers the server sent, or `nil` when the call ended on this
  ///     side (cancelled, deadline exceeded before trailers, unreachable server).
  ///   - error: Why the call failed, or `nil` when the server closed it with OK.
  func didClose(trailingMetadata: Metadata?, error: GRPCError?)

  /// The transport accepted a message written with ``GRPCCall2/writeData(_:)``.
  ///
  /// Sent only when flow control is enabled.
  func didWriteData()
}

extension GRPCResponseHandler {
  public func didReceiveInitialMetadata(_ initialMetadata: Metadata) {}
  public func didReceiveData(_ data: any Sendable) {}
  public func didClose(trailingMetadata: Metadata?, error: GRPCError?) {}
  public func didWriteData() {}
}
