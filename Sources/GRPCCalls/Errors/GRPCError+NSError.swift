public import Foundation
internal import GRPCCore

/// Bridges to `NSError` as gRPC Objective-C reports errors: domain `io.grpc`, the gRPC status
/// code as the error code and the status message as the localized description.
extension GRPCError: CustomNSError, LocalizedError {
  /// The domain of bridged errors, as in gRPC Objective-C.
  public static let errorDomain = "io.grpc"

  public var errorCode: Int { self.code.rawValue }

  public var errorUserInfo: [String: Any] {
    var info: [String: Any] = [NSLocalizedDescriptionKey: self.message]
    if let cause = self.cause {
      info[NSUnderlyingErrorKey] = cause as NSError
    }
    return info
  }

  public var errorDescription: String? { self.message }
}
