/// The `user-agent` every call sends: `<prefix> grpc-calls/<version> <suffix>`.
///
/// The core's HTTP/2 transport sends none (Design article, "Where the core needed help"), so the library adds it as request
/// metadata, as gRPC core adds its own primary user agent.
enum UserAgent {
  static let libraryToken = "grpc-calls/\(GRPCCallsVersion.string)"

  static func value(for options: GRPCCallOptions) -> String {
    [options.userAgentPrefix, Self.libraryToken, options.userAgentSuffix]
      .compactMap { $0 }
      .filter { !$0.isEmpty }
      .joined(separator: " ")
  }
}

/// The library's version, as sent in the `user-agent`.
public enum GRPCCallsVersion {
  public static let string = "0.1.0"
}
