public import Foundation
internal import GRPCCore

/// Bridges to `NSError` as gRPC Objective-C reports errors: domain `io.grpc`, the gRPC status
/// code as the error code, and in `userInfo`:
///
/// | key | value |
/// |---|---|
/// | `NSLocalizedDescriptionKey` | the status message (absent when it is empty) |
/// | `NSDebugDescriptionErrorKey` | ``debugMessage``, or the cause's description |
/// | ``headersKey`` (`io.grpc.HeadersKey`) | the response headers, when any came |
/// | ``trailersKey`` (`io.grpc.TrailersKey`) | the trailers, when any came |
/// | `NSUnderlyingErrorKey` | the cause |
///
/// Metadata becomes a dictionary from each key to its value, a `String`, or `Data` for `-bin`
/// keys; a key the server sent more than once keeps its first value (gRPC Objective-C's
/// dictionaries held one value per key too).
extension GRPCError: CustomNSError, LocalizedError {
  /// The domain of bridged errors, as in gRPC Objective-C.
  public static let errorDomain = "io.grpc"
  /// The `userInfo` key of the response headers: gRPC Objective-C's `kGRPCHeadersKey`.
  public static let headersKey = "io.grpc.HeadersKey"
  /// The `userInfo` key of the trailers: gRPC Objective-C's `kGRPCTrailersKey`.
  public static let trailersKey = "io.grpc.TrailersKey"

  public var errorCode: Int { self.code.rawValue }

  public var errorUserInfo: [String: Any] {
    var info: [String: Any] = [:]
    if !self.message.isEmpty {
      info[NSLocalizedDescriptionKey] = self.message
    }
    if let debug = self.debugMessage ?? self.cause.map({ String(describing: $0) }) {
      info[NSDebugDescriptionErrorKey] = debug
    }
    if !self.headers.isEmpty {
      info[Self.headersKey] = Self.dictionary(self.headers)
    }
    if !self.trailers.isEmpty {
      info[Self.trailersKey] = Self.dictionary(self.trailers)
    }
    if let cause = self.cause {
      info[NSUnderlyingErrorKey] = cause as NSError
    }
    return info
  }

  public var errorDescription: String? { self.message.isEmpty ? nil : self.message }

  /// `metadata` as gRPC Objective-C's dictionaries: the first value of each key.
  static func dictionary(_ metadata: Metadata) -> [String: Any] {
    var dictionary: [String: Any] = [:]
    for (key, value) in metadata where dictionary[key] == nil {
      // The transport may keep a `-bin` value as the base64 text it received.
      if key.hasSuffix("-bin"), let bytes = metadata[binaryValues: key].first(where: { _ in true })
      {
        dictionary[key] = Data(bytes)
        continue
      }
      switch value {
      case .string(let text): dictionary[key] = text
      case .binary(let bytes): dictionary[key] = Data(bytes)
      }
    }
    return dictionary
  }
}
