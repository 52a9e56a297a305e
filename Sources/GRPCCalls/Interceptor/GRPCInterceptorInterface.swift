public import Dispatch

/// The request side of an element in a call's interceptor chain (gRFC L50).
///
/// The chain calls these methods on ``dispatchQueue``, one at a time and in the order the
/// application made the requests. The response side of an element is ``GRPCResponseHandler``.
/// Interceptors do not implement this protocol directly: they subclass ``GRPCInterceptor``,
/// which conforms to both.
public protocol GRPCInterceptorInterface: Sendable {
  /// The queue the element's events run on.
  var dispatchQueue: DispatchQueue { get }

  /// The call starts, with the request and call options as the element above passed them on.
  func start(requestOptions: GRPCRequestOptions, callOptions: GRPCCallOptions)

  /// A request message to send: `Data` for raw calls, or a typed message when the call options
  /// carry a ``GRPCMarshaller``.
  func writeData(_ data: any Sendable)

  /// No more request messages.
  func finish()

  /// The call is cancelled.
  func cancel()

  /// The application asks for `count` more response messages (flow control, gRFC L49).
  func receiveNextMessages(_ count: Int)
}
