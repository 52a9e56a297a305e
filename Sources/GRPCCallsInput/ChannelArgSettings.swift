/// What gRPC core channel arguments (`grpc.keepalive_time_ms`, …) set, each checked for the
/// kind and range of value gRPC core takes, so that an app moving over from gRPC Objective-C
/// keeps its arguments and learns at once of a bad one.
package struct ChannelArgSettings: Hashable, Sendable {
  /// A channel argument's value: an integer or a string, as in gRPC core.
  package enum Value: Hashable, Sendable, CustomStringConvertible {
    case integer(Int)
    case string(String)

    package var description: String {
      switch self {
      case .integer(let value): "\(value)"
      case .string(let value): value.debugDescription
      }
    }
  }

  package var responseSizeLimit: Int?
  /// Seconds, from the arguments' milliseconds.
  package var keepaliveInterval: Double?
  package var keepaliveTimeout: Double?
  package var keepalivePermitWithoutCalls: Bool?
  package var connectMinTimeout: Double?
  package var connectInitialBackoff: Double?
  package var connectMaxBackoff: Double?
  package var userAgentPrefix: String?
  package var userAgentSuffix: String?
  package var serverAuthority: String?
  package var hostNameOverride: String?
  package var enableRetry: Bool?
  package var maxFrameSize: Int?
  /// gRPC core's bit set of algorithms accepted in responses: bit 0 identity (always on),
  /// bit 1 deflate, bit 2 gzip.
  package var compressionAlgorithmsBitset: Int?
  /// `grpc.service_config`, as given: JSON the options read.
  package var serviceConfigJSON: String?
  /// `grpc.lb_policy_name`: `pick_first` or `round_robin`.
  package var loadBalancingPolicyName: String?
  /// The names of the arguments no setting maps (gRPC core ignores arguments it does not know).
  package var unknownNames: [String] = []

  package init() {}

  /// Reads `arguments`.
  ///
  /// - Throws: The first argument, in name order, whose value is of the wrong kind or range.
  package init(parsing arguments: [String: Value]) throws(InvalidInput) {
    // Sorted, so that the first bad argument reported is always the same one.
    for (name, value) in arguments.sorted(by: { $0.key < $1.key }) {
      let arg = Arg(name: name, value: value)
      switch name {
      case "grpc.max_receive_message_length":
        self.responseSizeLimit = try arg.integer(in: 0 ... Int(Int32.max))
      case "grpc.keepalive_time_ms":
        self.keepaliveInterval = try arg.seconds()
      case "grpc.keepalive_timeout_ms":
        self.keepaliveTimeout = try arg.seconds()
      case "grpc.keepalive_permit_without_calls":
        self.keepalivePermitWithoutCalls = try arg.integer(in: 0 ... 1) == 1
      case "grpc.min_reconnect_backoff_ms":
        self.connectMinTimeout = try arg.seconds()
      case "grpc.initial_reconnect_backoff_ms":
        self.connectInitialBackoff = try arg.seconds()
      case "grpc.max_reconnect_backoff_ms":
        self.connectMaxBackoff = try arg.seconds()
      case "grpc.primary_user_agent":
        self.userAgentPrefix = try arg.string()
      case "grpc.secondary_user_agent":
        self.userAgentSuffix = try arg.string()
      case "grpc.default_authority":
        self.serverAuthority = try arg.string()
      case "grpc.ssl_target_name_override":
        self.hostNameOverride = try arg.string()
      case "grpc.enable_retries":
        self.enableRetry = try arg.integer(in: 0 ... 1) == 1
      case "grpc.http2.max_frame_size":
        self.maxFrameSize = try arg.integer(in: (1 << 14) ... ((1 << 24) - 1))
      case "grpc.compression_enabled_algorithms_bitset":
        self.compressionAlgorithmsBitset = try arg.integer(in: 0 ... 7)
      case "grpc.service_config":
        self.serviceConfigJSON = try arg.string()
      case "grpc.lb_policy_name":
        self.loadBalancingPolicyName = try arg.string(in: ["pick_first", "round_robin"])
      default:
        self.unknownNames.append(name)
      }
    }
  }

  private struct Arg {
    var name: String
    var value: Value

    func integer(in range: ClosedRange<Int>) throws(InvalidInput) -> Int {
      guard case .integer(let value) = self.value, range.contains(value) else {
        throw self.invalid("an integer in \(range.lowerBound)...\(range.upperBound)")
      }
      return value
    }

    func seconds() throws(InvalidInput) -> Double {
      Double(try self.integer(in: 0 ... Int(Int32.max))) / 1000
    }

    func string() throws(InvalidInput) -> String {
      guard case .string(let value) = self.value else { throw self.invalid("a string") }
      return value
    }

    func string(in choices: [String]) throws(InvalidInput) -> String {
      guard case .string(let value) = self.value, choices.contains(value) else {
        throw self.invalid("one of \(choices.map { "\"\($0)\"" }.joined(separator: ", "))")
      }
      return value
    }

    private func invalid(_ expected: String) -> InvalidInput {
      InvalidInput("Channel argument '\(self.name)' must be \(expected), not \(self.value)")
    }
  }
}
