internal import GRPCCallsInput
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix

extension HostTarget {
  /// `host` parsed, or `INVALID_ARGUMENT` saying what is wrong with it.
  static func parsed(_ host: String) throws(GRPCError) -> HostTarget {
    try GRPCError.checkingInput { () throws(InvalidInput) in try HostTarget(parsing: host) }
  }

  /// The target the core's name resolvers understand.
  var resolvableTarget: any ResolvableTarget {
    switch self {
    case .dns(let host, let port):
      return .dns(host: host, port: port)
    case .ipv4(let addresses):
      return .ipv4(pairs: addresses.map { ($0.host, $0.port) })
    case .ipv6(let addresses):
      return .ipv6(pairs: addresses.map { ($0.host, $0.port) })
    case .unix(let path):
      return .unixDomainSocket(path: path)
    }
  }
}

extension GRPCRequestOptions {
  /// `host` normalized as channels key it (`example.com` → `example.com:443`), for layers that
  /// keep settings per host.
  ///
  /// - Throws: `INVALID_ARGUMENT` naming what is wrong with a malformed host.
  package static func normalizedHost(_ host: String) throws(GRPCError) -> String {
    try HostTarget.parsed(host).description
  }
}
