/// Names a transport in the ``GRPCTransportRegistry``.
///
/// Set ``GRPCCallOptions/transport`` to use a registered transport instead of the one
/// ``GRPCCallOptions/transportType`` picks. The two built-in IDs name the HTTP/2 transports.
public struct GRPCTransportID: Hashable, Sendable, CustomStringConvertible {
  /// The ID's name, for example `"io.grpc.transport.core.secure"`.
  public let name: String

  /// Creates an ID; register a factory under it with ``GRPCTransportRegistry/register(_:for:)``.
  public init(_ name: String) {
    self.name = name
  }

  /// HTTP/2 over TLS: the same as ``GRPCTransportType/tls``.
  public static let secure = Self("io.grpc.transport.core.secure")

  /// HTTP/2 over plaintext TCP: the same as ``GRPCTransportType/insecure``.
  public static let insecure = Self("io.grpc.transport.core.insecure")

  public var description: String { self.name }
}
