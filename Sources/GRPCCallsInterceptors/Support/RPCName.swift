/// A call's path split as OpenTelemetry's RPC conventions name it: `rpc.service` is the full
/// service name (`grpc.testing.TestService`), `rpc.method` the method (`UnaryCall`).
struct RPCName: Sendable, Hashable {
  var service: String
  var method: String

  /// - Parameter path: `/package.Service/Method`; a path of another form keeps its text as the
  ///   service and an empty method, so metrics never lose a call.
  init(path: String) {
    let trimmed = path.hasPrefix("/") ? path.dropFirst() : Substring(path)
    if let slash = trimmed.lastIndex(of: "/") {
      self.service = String(trimmed[..<slash])
      self.method = String(trimmed[trimmed.index(after: slash)...])
    } else {
      self.service = String(trimmed)
      self.method = ""
    }
  }

  /// `package.Service/Method`, the span and log name.
  var fullName: String { "\(self.service)/\(self.method)" }
}
