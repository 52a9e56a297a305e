internal import Foundation
internal import GRPCCore
internal import NIOHTTP2

/// A stream the server reset (RST_STREAM) before it sent a status, mapped to a code by the
/// HTTP/2 error-code table of gRPC's protocol (PROTOCOL-HTTP2.md, "Errors"): the core reports
/// every reset as UNAVAILABLE, which tells the application to retry a call that, say, the
/// server cancelled or refused as too large. (Or the reset ``StreamEndInterpreter`` hands the
/// transport for a stream that never left the client, ``StreamEndInterpreter/neverLeftReset``.)
struct StreamReset {
  var code: RPCError.Code
  var message: String
  /// The HTTP/2 error code.
  var value: UInt32

  /// How ``message`` starts.
  static let messagePrefix = "The server reset the stream"

  /// The reset `error` reports, if it reports one.
  init?(_ error: RPCError) {
    guard error.code == .unavailable, case .streamReset(let value, let name)? = CoreFailure(error)
    else { return nil }
    self.value = value
    if value == Self.neverLeftValue {
      // Not the server's: the stream ended before anything of it left the client.
      self.code = .unavailable
      self.message = StreamEndInterpreter.neverLeftMessage
      return
    }
    self.code = Self.code(for: value)
    self.message =
      "\(Self.messagePrefix) (RST_STREAM \(name.uppercased()), 0x\(String(value, radix: 16))) "
      + "before sending a status"
  }

  /// Whether `error` reports a stream the server refused (REFUSED_STREAM): the server did no
  /// work on it, so it may be sent again.
  static func isRefused(_ error: GRPCError) -> Bool {
    guard let cause = error.cause as? RPCError, let reset = StreamReset(cause) else { return false }
    return reset.refused
  }

  /// The code of ``StreamEndInterpreter/neverLeftReset``.
  private static let neverLeftValue = UInt32(StreamEndInterpreter.neverLeftReset.networkCode)

  /// Whether the reset was REFUSED_STREAM.
  var refused: Bool { self.value == 0x7 }

  private static func code(for value: UInt32) -> RPCError.Code {
    switch value {
    case 0x7: .unavailable  // REFUSED_STREAM: no work was done; safe to retry
    case 0x8: .cancelled  // CANCEL
    case 0xB: .resourceExhausted  // ENHANCE_YOUR_CALM
    case 0xC: .permissionDenied  // INADEQUATE_SECURITY
    default: .internalError  // NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR and the rest
    }
  }
}
