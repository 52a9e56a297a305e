public import Foundation
internal import GRPCCalls
internal import GRPCCore
public import GRPCProtobuf

extension NSError {
  /// The server's rich error status, for code that handles errors as `NSError` (gRPC
  /// Objective-C's habit, kept by the v1 API): the `google.rpc.Status` in the
  /// `grpc-status-details-bin` value of `userInfo[GRPCError.trailersKey]`, decoded as
  /// ``GRPCCalls/GRPCError/googleRPCStatus()`` does; `nil` for an error of another domain or
  /// one whose server sent no details.
  ///
  /// - Throws: A `GRPCError` with code `internalError` when the value is not a valid
  ///   `google.rpc.Status`.
  public func googleRPCStatus() throws -> GoogleRPCStatus? {
    guard self.domain == GRPCError.errorDomain,
      let trailers = self.userInfo[GRPCError.trailersKey] as? [String: Any],
      let details = trailers[Self.statusDetailsKey] as? Data
    else { return nil }
    var metadata = Metadata()
    metadata.addBinary(Array(details), forKey: Self.statusDetailsKey)
    let code = RPCError.Code(Status.Code(rawValue: self.code) ?? .unknown) ?? .unknown
    return try GRPCError(code: code, message: self.localizedDescription, trailers: metadata)
      .googleRPCStatus()
  }

  /// The trailer that carries a `google.rpc.Status`.
  private static let statusDetailsKey = "grpc-status-details-bin"
}
