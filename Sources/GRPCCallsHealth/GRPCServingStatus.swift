/// A service's health, as the standard health service (`grpc.health.v1.Health`) reports it.
public enum GRPCServingStatus: Sendable, Hashable, CustomStringConvertible {
  /// The server does not know, or (from ``GRPCHealthClient/watch(service:options:callOptions:)``)
  /// the watch lost the server and is reconnecting.
  case unknown
  /// The service takes calls.
  case serving
  /// The service is up but does not take calls (starting, draining, a dependency down).
  case notServing
  /// The server has no such service: `Check` answered `NOT_FOUND`, or `Watch` said
  /// `SERVICE_UNKNOWN`.
  case serviceUnknown

  init(_ status: Grpc_Health_V1_HealthCheckResponse.ServingStatus) {
    switch status {
    case .serving: self = .serving
    case .notServing: self = .notServing
    case .serviceUnknown: self = .serviceUnknown
    case .unknown, .UNRECOGNIZED: self = .unknown
    }
  }

  /// The proto enum's name: `SERVING`, `NOT_SERVING`, `SERVICE_UNKNOWN`, `UNKNOWN`.
  public var description: String {
    switch self {
    case .unknown: "UNKNOWN"
    case .serving: "SERVING"
    case .notServing: "NOT_SERVING"
    case .serviceUnknown: "SERVICE_UNKNOWN"
    }
  }
}
