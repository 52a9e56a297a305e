internal import GRPCCore

/// How a channel picks among its server's addresses (``GRPCCallOptions/loadBalancingPolicy``):
/// the transport's own balancers.
public enum GRPCLoadBalancingPolicy: String, Hashable, Sendable, CaseIterable {
  /// Connect to the first address that accepts, and send every call there; on to the next
  /// address only when that one fails (gRPC's default).
  case pickFirst = "pick_first"
  /// Keep a connection to every address and spread calls over those that are ready, in turn.
  case roundRobin = "round_robin"

  /// The service-config entry that selects this policy.
  var config: ServiceConfig.LoadBalancingConfig {
    switch self {
    case .pickFirst: .pickFirst(shuffleAddressList: false)
    case .roundRobin: .roundRobin
    }
  }
}
