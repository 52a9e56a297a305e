public import GRPCCalls
public import GRPCCore
public import SwiftProtobuf

/// The responses of a streaming call, as an `AsyncSequence`.
///
/// Each step of the iteration asks the call for one more message (flow control, L49), or, once
/// a server stream floods the client, reads the next one from the transport itself: either
/// way a consumer that stops or slows down holds the server back through HTTP/2 flow control.
/// Iteration ends after the last message of a call that closed with OK and throws the
/// `GRPCError` of one that failed.
public struct GRPCResponseStream<Response: SwiftProtobuf.Message>: AsyncSequence, Sendable {
  public typealias Element = Response

  let bridge: AsyncCallBridge

  /// The response headers, once they arrived (after the first message, at the latest).
  public var initialMetadata: Metadata? { self.bridge.headers }

  /// The trailers, once the iteration ended cleanly; `nil` before.
  public var trailingMetadata: Metadata? { self.bridge.trailers }

  public func makeAsyncIterator() -> AsyncIterator {
    AsyncIterator(bridge: self.bridge)
  }

  public struct AsyncIterator: AsyncIteratorProtocol {
    @usableFromInline
    let source: any ResponseMessageSource

    init(bridge: AsyncCallBridge) {
      self.source = bridge
    }

    // Inlinable, so that the caller's module specializes it for its response type: a generic
    // step per message would look up the type's metadata and cast through it each time.
    @inlinable
    public mutating func next() async throws -> Response? {
      guard let message = try await self.source.nextMessage() else { return nil }
      return try responseCast(message, to: Response.self)
    }
  }
}

/// Where a response stream's iterator reads: the call's ``AsyncCallBridge``, which keeps
/// messages as `any Sendable`.
@usableFromInline
protocol ResponseMessageSource: Sendable {
  /// The next message, `nil` after a clean close; throws the call's error.
  func nextMessage() async throws -> (any Sendable)?
}

/// `message`, a response the call delivered, as a `Response`.
///
/// A free function rather than a method of ``ResponseMessageSource``: a generic method called
/// through the protocol's existential is generic over the source too, and the optimizer does
/// not specialize it for the response type alone, so each message would be cast through the
/// type's metadata at run time.
@inlinable
func responseCast<Response>(_ message: any Sendable, to type: Response.Type) throws -> Response {
  guard let response = message as? Response else {
    // Unreachable: the call's marshaller lets only responses through.
    throw GRPCError(
      code: .internalError,
      message: "The call delivered a \(Swift.type(of: message)) where \(Response.self) was expected"
    )
  }
  return response
}

/// Writes the requests of a streaming call.
///
/// ``write(_:)`` returns once the transport accepted the message, so a fast writer waits for
/// the network instead of filling memory.
public struct GRPCRequestWriter<Request: SwiftProtobuf.Message>: Sendable {
  let bridge: any RequestSink

  /// Sends `message`; returns when the transport accepted it.
  ///
  /// - Throws: The call's `GRPCError` when it ended first.
  public func write(_ message: Request) async throws {
    try await self.bridge.write(message)
  }

  /// Sends each of `messages` in turn.
  public func write(contentsOf messages: some Sequence<Request>) async throws {
    for message in messages {
      try await self.write(message)
    }
  }
}

/// Where a ``GRPCRequestWriter`` sends; any response type.
protocol RequestSink: Sendable {
  func write(_ message: any Sendable) async throws
}

extension AsyncCallBridge: RequestSink {}
