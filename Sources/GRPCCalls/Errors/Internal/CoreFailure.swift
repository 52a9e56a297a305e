internal import Foundation
internal import GRPCCore
internal import NIOSSL

/// A failure of the core's HTTP/2 transport that the library acts on, recognized in one place.
///
/// grpc-swift-nio-transport reports these as an `RPCError` whose only distinguishing mark is
/// its message: a stream the server reset, a stream that closed without a status, a response
/// that is not gRPC, a message over the size limit, a stream asked of a connection that was
/// going away, a connection that closed before HTTP/2 began. Where a structured cause exists
/// (a TLS error, a `ChannelError`, a failure of one of our own connection handlers) the library
/// reads that instead. This type holds every text of a dependency the library still matches
/// (``Text``), BoringSSL's handshake reasons too; `CoreFailureCanaryTests` checks each against
/// the dependency, so that a reworded message fails a test instead of silently turning a
/// behaviour off (transparent retry, the size in an oversize error, the reset's code, the
/// advice to a TLS client of a plaintext server).
enum CoreFailure: Equatable, Sendable {
  /// The server reset the stream (RST_STREAM) before it sent a status, with this HTTP/2 error
  /// code (`name` as the transport spells it, e.g. `refused stream`).
  case streamReset(code: UInt32, name: String)
  /// The stream closed before a status came, without a reset: its connection closed, or the
  /// stream failed.
  case streamClosed
  /// A response message's length prefix exceeded the limit.
  case messageTooLarge(limit: Int, actual: Int)
  /// A compressed response message grew past the limit while it was inflated.
  case messageTooLargeToDecompress
  /// The response's `:status` was not 200.
  case notHTTP200(status: String)
  /// The response had no gRPC content type.
  case notGRPCContentType
  /// A stream was asked of a connection that was not ready for it.
  case connectionNotReady(ConnectionNotReady)
  /// The peer closed the connection before the HTTP/2 connection preface completed (a TLS
  /// server does this to a plaintext client).
  case closedBeforePreface

  /// Why no connection took a stream.
  enum ConnectionNotReady: Sendable {
    /// The connection had begun to close (a GOAWAY, or the transport letting it go).
    case closing
    /// The connection's channel failed as the stream was opened on it.
    case unavailable
    /// The channel's load balancer had no ready subchannel: between two connections.
    case noSubchannel
  }

  /// The dependency's words, each a literal of grpc-swift-nio-transport (with the parts it
  /// interpolates left out).
  enum Text {
    /// `GRPCStreamStateMachine`: a stream that closed before its status.
    static let streamClosed = "Stream unexpectedly closed"
    /// `GRPCStreamStateMachine`: the reset's code follows, `0x7: refused stream`.
    static let streamReset = "received RST_STREAM frame ("
    /// `GRPCMessageDecoder`: `(max: N, actual: M)` follows.
    static let payloadTooLarge = "Message has exceeded the configured maximum payload size"
    /// `Zlib`.
    static let tooLargeToDecompress = "Message is too large to decompress."
    /// `GRPCStreamStateMachine`: the status and `).` follow.
    static let notHTTP200 = "Unexpected non-200 HTTP Status Code ("
    /// `GRPCStreamStateMachine`.
    static let missingContentType = "Missing content-type header"
    /// `Connection` and `Subchannel`.
    static let connectionClosing = "subchannel isn't ready"
    /// `Connection` and `WrappedChannel`.
    static let connectionUnavailable = "subchannel is unavailable"
    /// `GRPCChannel`.
    static let noSubchannel = "Channel isn't ready, no subchannel available."
    /// `Connection`: the end of "…closed the connection before completing the HTTP/2
    /// connection preface."
    static let closedBeforePreface = "the HTTP/2 connection preface."
    /// BoringSSL's reason (`SSL_R_WRONG_VERSION_NUMBER`, through swift-nio-ssl) when the
    /// server's answer to the ClientHello is not a TLS record: a plaintext server.
    static let notTLSRecord = "WRONG_VERSION_NUMBER"
    /// `ClientConnectionHandler`: the debug data of the GOAWAY the client sends when a
    /// keepalive ping went unanswered for the keepalive timeout.
    static let keepaliveExpired = "keepalive_expired"
  }

  /// Whether the client's GOAWAY with this debug data closed its connection because a keepalive
  /// ping went unanswered.
  static func isKeepaliveExpiry(goAwayDebugData: String?) -> Bool {
    goAwayDebugData == Text.keepaliveExpired
  }

  /// The failure a message of the transport reports; `nil` for any other message.
  init?(message: String) {
    // The oversize texts first: the transport may quote one inside another failure's message.
    if message.contains(Text.payloadTooLarge), let sizes = Self.sizes(in: message) {
      self = .messageTooLarge(limit: sizes.limit, actual: sizes.actual)
    } else if message.contains(Text.tooLargeToDecompress) {
      self = .messageTooLargeToDecompress
    } else if message.hasPrefix(Text.streamClosed) {
      // A reset whose code cannot be read still ended the stream without a status.
      self = Self.reset(in: message) ?? .streamClosed
    } else if message.hasPrefix(Text.notHTTP200) {
      let status = message.dropFirst(Text.notHTTP200.count).prefix { $0 != ")" }
      self = .notHTTP200(status: String(status))
    } else if message == Text.missingContentType {
      self = .notGRPCContentType
    } else if message == Text.connectionClosing {
      self = .connectionNotReady(.closing)
    } else if message == Text.connectionUnavailable {
      self = .connectionNotReady(.unavailable)
    } else if message == Text.noSubchannel {
      self = .connectionNotReady(.noSubchannel)
    } else if message.contains(Text.closedBeforePreface) {
      self = .closedBeforePreface
    } else {
      return nil
    }
  }

  /// The reset in "…received RST_STREAM frame (0x7: refused stream).".
  private static func reset(in message: String) -> CoreFailure? {
    guard let marker = message.range(of: Text.streamReset) else { return nil }
    let rest = message[marker.upperBound...]
    guard rest.hasPrefix("0x") else { return nil }
    let digits = rest.dropFirst(2)
    guard let code = UInt32(digits.prefix { $0.isHexDigit }, radix: 16) else { return nil }
    let name = digits.drop { $0 != ":" }.dropFirst().prefix { $0 != ")" }.drop { $0 == " " }
    return .streamReset(code: code, name: String(name))
  }

  /// The failure `error` itself reports (an `RPCError`'s or `GRPCError`'s message), not its
  /// causes.
  init?(_ error: any Error) {
    switch error {
    case let error as RPCError: self.init(message: error.message)
    case let error as GRPCError: self.init(message: error.message)
    default: return nil
    }
  }

  /// The failures that `error` and its causes report, outermost first: the transport wraps
  /// some of its failures in others (an oversize message in a stream's failure).
  static func all(in error: any Error) -> [CoreFailure] {
    var failures: [CoreFailure] = []
    var next: (any Error)? = error
    for _ in 0 ..< 8 {
      guard let current = next else { break }
      let failure: CoreFailure?
      switch current {
      case let error as RPCError:
        (failure, next) = (CoreFailure(message: error.message), error.cause)
      case let error as GRPCError:
        (failure, next) = (CoreFailure(message: error.message), error.cause)
      default:
        // An error of another type, which may quote the transport's message.
        (failure, next) = (CoreFailure(message: String(describing: current)), nil)
      }
      if let failure { failures.append(failure) }
    }
    return failures
  }

  /// Whether the stream ended before a status came: it closed, or the server reset it.
  var endedStreamWithoutStatus: Bool {
    switch self {
    case .streamClosed, .streamReset: true
    default: false
    }
  }

  /// `(max: N, actual: M)`.
  private static func sizes(in message: String) -> (limit: Int, actual: Int)? {
    guard let max = message.range(of: "max: "), let actual = message.range(of: "actual: ") else {
      return nil
    }
    let limit = Int(message[max.upperBound...].prefix(while: \.isNumber))
    let size = Int(message[actual.upperBound...].prefix(while: \.isNumber))
    guard let limit, let size else { return nil }
    return (limit, size)
  }
}

// MARK: TLS

extension CoreFailure {
  /// BoringSSL's reasons for a failed handshake, each once, in order.
  ///
  /// A reason is the last field of swift-nio-ssl's description of the error, whose code is not
  /// public: `WRONG_VERSION_NUMBER` from "Error: 268435703 error:100000f7:SSL routines:
  /// OPENSSL_internal:WRONG_VERSION_NUMBER at /build/…/tls_record.cc:231".
  static func tlsReasons(_ errors: [BoringSSLInternalError]) -> [String] {
    var reasons: [String] = []
    for error in errors {
      var text = Substring(error.description)
      if let at = text.range(of: " at /") {
        text = text[..<at.lowerBound]
      }
      let reason = String(text.split(separator: ":").last ?? text)
        .trimmingCharacters(in: .whitespaces)
      if !reasons.contains(reason) {
        reasons.append(reason)
      }
    }
    return reasons
  }

  /// Whether BoringSSL's `reasons` say the server answered the ClientHello with something that
  /// is not TLS (a plaintext HTTP/2 server's frames).
  static func plaintextServer(_ reasons: [String]) -> Bool {
    reasons.contains(Text.notTLSRecord)
  }
}
