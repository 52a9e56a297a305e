internal import GRPCCore
internal import NIOCore
internal import NIOSSL

extension GRPCError {
  /// Converts an error raised while running a call into the error the call closes with.
  ///
  /// The core reports a cancelled RPC task either as a bare `CancellationError` or as
  /// `RPCError(.unknown)` caused by one (Design article, "Where the core needed help"); both become `CANCELLED`.
  ///
  /// - Parameters:
  ///   - error: What the core (or our own code) threw.
  ///   - headers: The response headers already delivered to the handler, if any.
  ///   - responseSizeLimit: The limit in force, used to rewrite the core's oversize message.
  init(converting error: any Error, headers: Metadata, responseSizeLimit: Int) {
    switch error {
    case let error as GRPCError:
      self = error
      if self.headers.isEmpty { self.headers = headers }

    case is CancellationError:
      self.init(code: .cancelled, message: "The call was cancelled", headers: headers, cause: error)

    case let error as RPCError:
      if error.code == .unknown, error.cause is CancellationError {
        self.init(
          code: .cancelled,
          message: "The call was cancelled",
          headers: headers,
          cause: error
        )
      } else if let oversize = OversizeResponse(error, limit: responseSizeLimit) {
        self.init(
          code: .resourceExhausted,
          message: oversize.message,
          headers: headers,
          trailers: error.metadata,
          cause: error,
          debugMessage: oversize.explanation
        )
      } else if error.code == .unavailable, let tls = Self.tlsFailure(in: error) {
        // The core reports a failed handshake as a peer that closed before the HTTP/2
        // preface; what went wrong is in the TLS error it carries.
        self.init(
          code: .unavailable,
          message: TLSFailure.message(for: tls),
          headers: headers,
          cause: error
        )
      } else if error.code == .unavailable, let explained = Self.connectionFailure(in: error) {
        // The core says the connection closed before the HTTP/2 preface; a handler of ours
        // closed it and knows why (a peer speaking HTTP/1, the connect timeout).
        self.init(
          code: .unavailable,
          message: explained.description,
          headers: headers,
          cause: error
        )
      } else if let reset = StreamReset(error) {
        self.init(code: reset.code, message: reset.message, headers: headers, cause: error)
      } else if let message = NotGRPCAnswer.message(for: error) {
        self.init(
          code: error.code,
          message: message,
          headers: headers,
          trailers: error.metadata,
          cause: error
        )
      } else {
        self.init(
          code: error.code,
          message: error.message,
          headers: headers,
          trailers: error.metadata,
          cause: error.cause
        )
      }

    case let error as ChannelError:
      // The connection closed or failed under the call (what the core's own path reports as
      // a stream that closed unexpectedly).
      self.init(
        code: .unavailable,
        message: "The connection to the server closed: \(error)",
        headers: headers,
        cause: error
      )

    case let error as RuntimeError:
      self.init(
        code: .unavailable,
        message: "The channel could not run the call: \(error.message)",
        headers: headers,
        cause: error
      )

    default:
      self.init(
        code: .unknown,
        message: "The call failed: \(String(describing: error))",
        headers: headers,
        cause: error
      )
    }
  }

  /// The trailers of a status the server sent, when `error` is one; `nil` when the call ended
  /// on this side or the transport ended it (no trailers came).
  ///
  /// On the `GRPCClient` path a server's status and the transport's own failures both arrive
  /// as thrown `RPCError`s; the transport's carry a cause, or say the stream closed, or are
  /// ones this library recognizes (an oversize message, a failed handshake).
  static func serverTrailers(in error: any Error) -> Metadata? {
    guard let error = error as? RPCError, !Self.isLocal(error) else { return nil }
    return error.metadata
  }

  /// Whether the transport, not the server, produced `error`: it has a cause, says the
  /// stream closed (in the transport's words or ours), or reports an oversize message.
  static func isLocal(_ error: RPCError) -> Bool {
    error.cause != nil || CoreFailure(error)?.endedStreamWithoutStatus == true
      || StreamEndInterpreter.isOwnMessage(error.message)
      || OversizeResponse(error, limit: 0) != nil
  }

  /// Why one of our connection handlers closed the connection, somewhere in `error`'s chain of
  /// causes, if one did.
  private static func connectionFailure(in error: RPCError) -> (any ConnectionFailure)? {
    var cause = error.cause
    for _ in 0 ..< 8 {
      switch cause {
      case let failure as any ConnectionFailure: return failure
      case ChannelError.connectTimeout(let limit)?:
        // The socket's connect timeout, which the connection set-up sets to the same limit.
        return HandshakeTimeoutHandler.Expired(limit: limit)
      case let wrapped as RPCError: cause = wrapped.cause
      default: return nil
      }
    }
    return nil
  }

  /// The TLS error somewhere in `error`'s chain of causes, if any.
  private static func tlsFailure(in error: RPCError) -> (any Error)? {
    var cause = error.cause
    for _ in 0 ..< 8 {
      switch cause {
      case let tls as NIOSSLError: return tls
      case let tls as NIOSSLExtraError: return tls
      case let tls as CertificateNameMismatch: return tls
      case let wrapped as RPCError: cause = wrapped.cause
      default: return nil
      }
    }
    return nil
  }
}

/// An error a connection handler of ours closes a connection with, whose description says
/// what went wrong better than the core's "closed before the HTTP/2 preface".
protocol ConnectionFailure: Error, CustomStringConvertible {}

extension HTTP1Answer: ConnectionFailure {}

extension HandshakeTimeoutHandler.Expired: ConnectionFailure {}
