internal import GRPCCallsInput
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
    let settings = try GRPCError.checkingInput { () throws(InvalidInput) in
      try ChannelArgSettings(parsing: options.additionalChannelArgs.mapValues(\.settingsValue))
    }
    var options = options
    var extras = Extras()
    func set<Value>(_ option: WritableKeyPath<GRPCCallOptions, Value>, _ value: Value?) {
      if let value { options[keyPath: option] = value }
    }
    set(\.responseSizeLimit, settings.responseSizeLimit)
    set(\.keepaliveInterval, settings.keepaliveInterval)
    set(\.keepaliveTimeout, settings.keepaliveTimeout)
    set(\.keepalivePermitWithoutCalls, settings.keepalivePermitWithoutCalls)
    set(\.connectMinTimeout, settings.connectMinTimeout)
    set(\.connectInitialBackoff, settings.connectInitialBackoff)
    set(\.connectMaxBackoff, settings.connectMaxBackoff)
    set(\.userAgentPrefix, settings.userAgentPrefix.map(Optional.some))
    set(\.userAgentSuffix, settings.userAgentSuffix.map(Optional.some))
    set(\.serverAuthority, settings.serverAuthority.map(Optional.some))
    set(\.hostNameOverride, settings.hostNameOverride.map(Optional.some))
    set(\.enableRetry, settings.enableRetry)
    if let json = settings.serviceConfigJSON {
      do {
        options.serviceConfig = try GRPCServiceConfig.parse(json)
      } catch {
        throw GRPCError(
          code: .invalidArgument,
          message: "Channel argument 'grpc.service_config': \(error.message)"
        )
      }
    }
    set(
      \.loadBalancingPolicy,
      settings.loadBalancingPolicyName.flatMap(GRPCLoadBalancingPolicy.init(rawValue:))
        .map(Optional.some)
    )
    extras.maxFrameSize = settings.maxFrameSize
    if let bits = settings.compressionAlgorithmsBitset {
      extras.responseCompression = [(1, .deflate), (2, .gzip)].compactMap { bit, algorithm in
        bits & (1 << bit) != 0 ? algorithm : nil
      }
    }
    for name in settings.unknownNames {
      extras.unknown[name] = options.additionalChannelArgs[name]
    }
    return (options, extras)
  }
}

extension GRPCChannelArgValue {
  fileprivate var settingsValue: ChannelArgSettings.Value {
    switch self {
    case .integer(let value): .integer(value)
    case .string(let value): .string(value)
    }
  }
}
