internal import GRPCCallsInput
internal import GRPCCore

/// The metadata a call sends: the options' initial metadata, the user agent and the token.
enum RequestMetadata {
  /// Builds the request metadata, asking the token provider (at most once) if there is one.
  ///
  /// - Throws: ``GRPCError`` with `INVALID_ARGUMENT` naming a key or value HTTP/2 cannot carry
  ///   (see ``validated(_:)``), or `UNAUTHENTICATED` when the token provider throws.
  /// - Parameter userAgent: The channel's user agent (options and channel arguments applied).
  static func make(
    for options: GRPCCallOptions,
    userAgent: String
  ) async throws(GRPCError) -> Metadata {
    var metadata = try Self.validated(options.initialMetadata)
    metadata.removeAllValues(forKey: "user-agent")
    metadata.addString(userAgent, forKey: "user-agent")
    if let token = try await Self.token(for: options) {
      metadata.removeAllValues(forKey: "authorization")
      metadata.addString("Bearer \(token)", forKey: "authorization")
    }
    return metadata
  }

  private static func token(for options: GRPCCallOptions) async throws(GRPCError) -> String? {
    if let token = options.oauth2AccessToken {
      return token
    }
    guard let provider = options.authTokenProvider else { return nil }
    do {
      return try await provider.accessToken()
    } catch {
      throw GRPCError(
        code: .unauthenticated,
        message: "The auth token provider failed: \(error)",
        cause: error
      )
    }
  }

  /// `metadata` with keys lowered, after checking what gRPC allows (see `MetadataCheck`).
  ///
  /// - Throws: `INVALID_ARGUMENT` naming the key or value HTTP/2 cannot carry.
  static func validated(_ metadata: Metadata) throws(GRPCError) -> Metadata {
    try GRPCError.checkingInput { () throws(InvalidInput) in try MetadataCheck.validated(metadata) }
  }
}
