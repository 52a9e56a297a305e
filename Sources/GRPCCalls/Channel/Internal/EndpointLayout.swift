internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix
internal import NIOCore

/// How a channel hands its resolved addresses to the transport's balancer.
///
/// The transport's resolvers give an `ipv4:`/`ipv6:` list as one endpoint per address, and a DNS
/// name as one endpoint holding all its addresses; its pick-first balancer takes only the first
/// endpoint, and its round-robin balancer keeps one connection per endpoint. So each policy gets
/// the layout that lets it do its job over every address, whatever the target's scheme.
enum EndpointLayout: Hashable, Sendable {
  /// One endpoint with every address, in order: pick-first connects to the first that accepts,
  /// and on to the next when that one fails.
  case oneEndpoint
  /// One endpoint per address: round-robin spreads calls over all that are ready.
  case endpointPerAddress

  /// The layout for the balancer `config` selects: its first policy the transport supports, as
  /// the transport picks it (pick-first when none is given).
  init(_ config: ServiceConfig) {
    let policy = config.loadBalancingConfig.first { $0.roundRobin != nil || $0.pickFirst != nil }
    self = policy?.roundRobin != nil ? .endpointPerAddress : .oneEndpoint
  }

  /// `result` with its addresses laid out for the balancer; every address once, in order.
  func arrange(_ result: NameResolutionResult) -> NameResolutionResult {
    var seen = Set<GRPCNIOTransportHTTP2Posix.SocketAddress>()
    let addresses = result.endpoints.flatMap(\.addresses).filter { seen.insert($0).inserted }
    guard !addresses.isEmpty else { return result }
    var arranged = result
    switch self {
    case .oneEndpoint:
      arranged.endpoints = [Endpoint(addresses: addresses)]
    case .endpointPerAddress:
      arranged.endpoints = addresses.map { Endpoint(addresses: [$0]) }
    }
    return arranged
  }

  /// `result` without the endpoints holding any of `addresses`, or `nil` if that would leave
  /// none or remove nothing.
  static func removing(
    _ addresses: Set<ServerAddress>,
    from result: NameResolutionResult
  ) -> NameResolutionResult? {
    let kept = result.endpoints.filter { endpoint in
      !endpoint.addresses.contains { ServerAddress($0).map(addresses.contains) ?? false }
    }
    guard !kept.isEmpty, kept.count < result.endpoints.count else { return nil }
    var reduced = result
    reduced.endpoints = kept
    return reduced
  }
}

/// A server's IP address and port, as a connection and a resolver result both name it.
///
/// The host is kept in the text NIO gives a connection's address: an IPv6 address has many
/// spellings (`::1`, `0:0:0:0:0:0:0:1`) and a target may use any of them.
struct ServerAddress: Hashable, Sendable {
  private(set) var host: String
  private(set) var port: Int

  init?(_ address: GRPCNIOTransportHTTP2Posix.SocketAddress) {
    if let ipv4 = address.ipv4 {
      self.init(host: ipv4.host, port: ipv4.port)
    } else if let ipv6 = address.ipv6 {
      self.init(host: ipv6.host, port: ipv6.port)
    } else {
      return nil
    }
  }

  init(host: String, port: Int) {
    self.host = (try? NIOCore.SocketAddress(ipAddress: host, port: port).ipAddress) ?? host
    self.port = port
  }
}
