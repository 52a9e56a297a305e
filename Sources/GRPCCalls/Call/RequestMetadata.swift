internal import GRPCCore

/// The metadata a call sends: the options' initial metadata, the user agent and the token.
enum RequestMetadata {
  /// Builds the request metadata, asking the token provider (at most once) if there is one.
  ///
  /// - Throws: ``GRPCError`` with `INVALID_ARGUMENT` naming a key or value HTTP/2 cannot carry
  ///   (see ``validated(_:)``), or `UNAUTHENTICATED` when the token provider throws.
  /// - Parameter userAgent: The channel's user agent (options and channel arguments applied).
  static func make(for options: GRPCCallOptions, userAgent: String) async throws(GRPCError) -> Metadata {
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

  /// `metadata` with upper-case ASCII in keys lowered (HTTP/2 sends keys in lower case; gRPC
  /// Objective-C and grpc-java lower them too), after checking what gRPC allows, so that a bad
  /// entry fails the call here with its name rather than as a reset stream: keys of ASCII
  /// letters, digits, `-`, `_` and `.`; binary values only under keys ending in `-bin`; text
  /// values of printable ASCII.
  static func validated(_ metadata: Metadata) throws(GRPCError) -> Metadata {
    var lowered = false
    for (key, value) in metadata {
      guard !key.isEmpty else {
        throw Self.invalid("Invalid request metadata key '': a key must not be empty")
      }
      guard key.utf8.allSatisfy({ Self.isKeyByte($0) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }) else {
        throw Self.invalid(
          "Invalid request metadata key '\(key)': keys are ASCII letters, digits, '-', '_' and '.'"
        )
      }
      lowered = lowered || !key.utf8.allSatisfy(Self.isKeyByte)
      switch value {
      case .binary where !key.lowercased().hasSuffix("-bin"):
        throw Self.invalid(
          "Request metadata key '\(key)' has a binary value: binary values need a key ending in -bin"
        )
      case .string(let text) where !key.lowercased().hasSuffix("-bin") && !text.utf8.allSatisfy({ (0x20...0x7E).contains($0) }):
        throw Self.invalid(
          "Invalid value of request metadata key '\(key)': text values are printable ASCII; send other data "
            + "as binary under a key ending in -bin"
        )
      default:
        break
      }
    }
    guard lowered else { return metadata }
    return Metadata(metadata.map { (key: $0.key.lowercased(), value: $0.value) })
  }

  private static func isKeyByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
      true
    case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
      true
    default:
      false
    }
  }

  private static func invalid(_ message: String) -> GRPCError {
    GRPCError(code: .invalidArgument, message: message)
  }
}
