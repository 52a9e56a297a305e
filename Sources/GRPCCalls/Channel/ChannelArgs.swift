internal import Foundation
internal import GRPCCore

/// Applies ``GRPCCallOptions/additionalChannelArgs`` to the options they override.
///
/// Names this library maps change options; any other is kept (it separates channels, so two
/// configurations that differ only in it never share one) and reported by a warning when its
/// channel opens: gRPC core ignores arguments it does not know, so an app moving over from
/// gRPC Objective-C must not start failing on them.
enum ChannelArgs {
  /// What the arguments set that has no option of its own.
  struct Extras: Hashable, Sendable {
    var maxFrameSize: Int?
    /// The algorithms the channel accepts in responses (gzip and deflate unless an argument
    /// says otherwise).
    var responseCompression: [GRPCCompressionAlgorithm] = [.deflate, .gzip]
    /// The arguments no setting maps, as given.
    var unknown: [String: GRPCChannelArgValue] = [:]
  }

  /// The options with every argument applied, and the settings with no option of their own.
  ///
  /// - Throws: `INVALID_ARGUMENT` naming an argument with a value of the wrong kind or range.
  static func apply(to options: GRPCCallOptions) throws(GRPCError) -> (GRPCCallOptions, Extras) {
    var options = options
    var extras = Extras()
    // Sorted, so that the first bad argument reported is always the same one.
    for (name, value) in options.additionalChannelArgs.sorted(by: { $0.key < $1.key }) {
      let arg = Arg(name: name, value: value)
      switch name {
      case "grpc.max_receive_message_length":
        options.responseSizeLimit = try arg.integer(in: 0...Int(Int32.max))
      case "grpc.keepalive_time_ms":
        options.keepaliveInterval = try arg.seconds()
      case "grpc.keepalive_timeout_ms":
        options.keepaliveTimeout = try arg.seconds()
      case "grpc.min_reconnect_backoff_ms":
        options.connectMinTimeout = try arg.seconds()
      case "grpc.initial_reconnect_backoff_ms":
        options.connectInitialBackoff = try arg.seconds()
      case "grpc.max_reconnect_backoff_ms":
        options.connectMaxBackoff = try arg.seconds()
      case "grpc.primary_user_agent":
        options.userAgentPrefix = try arg.string()
      case "grpc.secondary_user_agent":
        options.userAgentSuffix = try arg.string()
      case "grpc.default_authority":
        options.serverAuthority = try arg.string()
      case "grpc.ssl_target_name_override":
        options.hostNameOverride = try arg.string()
      case "grpc.enable_retries":
        options.enableRetry = try arg.integer(in: 0...1) == 1
      case "grpc.http2.max_frame_size":
        extras.maxFrameSize = try arg.integer(in: (1 << 14)...((1 << 24) - 1))
      case "grpc.compression_enabled_algorithms_bitset":
        // gRPC core's bits: 0 identity (always on), 1 deflate, 2 gzip.
        let bits = try arg.integer(in: 0...7)
        extras.responseCompression = [(1, .deflate), (2, .gzip)].compactMap { bit, algorithm in
          bits & (1 << bit) != 0 ? algorithm : nil
        }
      default:
        extras.unknown[name] = value
      }
    }
    return (options, extras)
  }

  private struct Arg {
    var name: String
    var value: GRPCChannelArgValue

    func integer(in range: ClosedRange<Int>) throws(GRPCError) -> Int {
      guard case .integer(let value) = self.value, range.contains(value) else {
        throw self.invalid("an integer in \(range.lowerBound)...\(range.upperBound)")
      }
      return value
    }

    func seconds() throws(GRPCError) -> TimeInterval {
      TimeInterval(try self.integer(in: 0...Int(Int32.max))) / 1000
    }

    func string() throws(GRPCError) -> String {
      guard case .string(let value) = self.value else { throw self.invalid("a string") }
      return value
    }

    private func invalid(_ expected: String) -> GRPCError {
      GRPCError(
        code: .invalidArgument,
        message: "Channel argument '\(self.name)' must be \(expected), not \(self.value)"
      )
    }
  }
}
