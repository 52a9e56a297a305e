/// A method of a protobuf service: package, service and method name.
public struct GRPCProtoMethod: Hashable, Sendable, CustomStringConvertible {
  /// The proto package, e.g. `grpc.testing`; may be empty.
  public var package: String
  /// The service's name, e.g. `TestService`.
  public var service: String
  /// The method's name, e.g. `UnaryCall`.
  public var method: String

  /// Creates a method.
  public init(package: String, service: String, method: String) {
    self.package = package
    self.service = service
    self.method = method
  }

  /// The fully qualified service name: `package.Service`, or `Service` with no package.
  public var fullyQualifiedService: String {
    self.package.isEmpty ? self.service : "\(self.package).\(self.service)"
  }

  /// The HTTP/2 path: `/package.Service/Method`, or `/Service/Method` with no package.
  public var path: String {
    "/\(self.fullyQualifiedService)/\(self.method)"
  }

  public var description: String { self.path }
}
