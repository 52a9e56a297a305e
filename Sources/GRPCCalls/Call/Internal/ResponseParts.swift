internal import Foundation
internal import GRPCCore

/// A part of an attempt's response, whichever path to the core it came from.
enum ResponsePart: Sendable {
  case headers(Metadata)
  case message(ResponseBytes)
  /// The server's status and trailers: the last part.
  case status(Status, Metadata)
}

/// A response message's bytes: where the transport keeps them (the raw path), so that a
/// marshaller may parse them in place, or as the core's executor handed them over (the
/// `GRPCClient` path).
enum ResponseBytes: Sendable {
  case transport(any GRPCContiguousBytes & Sendable)
  case data(Data)

  /// The bytes as `Data`: a copy of the transport's.
  var data: Data {
    switch self {
    case .transport(let bytes): bytes.withUnsafeBytes { Data($0) }
    case .data(let data): data
    }
  }
}

/// Where an attempt's response parts come from: the transport's stream on the raw path
/// (``TransportResponseParts``), the executor's response on the `GRPCClient` path
/// (``ClientResponseParts``). ``ResponsePartReader`` reads either.
///
/// A part source throws what ended the stream on this side (the transport, a cancellation) and
/// gives a status the server sent as a part. (On the `GRPCClient` path a status the library
/// takes for the transport's own, ``GRPCError/isLocal(_:)``, is thrown instead.)
protocol ResponsePartSource {
  mutating func next() async throws -> ResponsePart?
}

/// The response parts of a stream of the transport itself.
struct TransportResponseParts<Bytes: GRPCContiguousBytes & Sendable>: ResponsePartSource {
  private var parts: RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>.AsyncIterator

  init(_ inbound: RPCAsyncSequence<RPCResponsePart<Bytes>, any Error>) {
    self.parts = inbound.makeAsyncIterator()
  }

  mutating func next() async throws -> ResponsePart? {
    switch try await self.parts.next() {
    case .metadata(let metadata): return .headers(metadata)
    case .message(let bytes): return .message(.transport(bytes))
    case .status(let status, let trailers): return .status(status, trailers)
    case nil: return nil
    }
  }
}

/// The response parts of a `GRPCClient` response.
///
/// Its executor turns a server's non-OK status into a thrown `RPCError`, as it does the
/// transport's own failures: the server's (``GRPCError/serverTrailers(in:)``) become a status
/// part again, so both paths read a status the same way.
struct ClientResponseParts: ResponsePartSource {
  private var response: StreamingClientResponse<Data>?
  private var body:
    RPCAsyncSequence<StreamingClientResponse<Data>.Contents.BodyPart, any Error>
      .AsyncIterator?

  init(_ response: StreamingClientResponse<Data>) {
    self.response = response
  }

  mutating func next() async throws -> ResponsePart? {
    if let response = self.response.take() {
      switch response.accepted {
      case .success(let contents):
        self.body = contents.bodyParts.makeAsyncIterator()
        return .headers(contents.metadata)
      case .failure(let rejected):
        // Trailers-only: a status and no headers.
        return try Self.status(of: RetryInfoPushback.removed(from: rejected))
      }
    }
    do {
      switch try await self.body?.next() {
      case .message(let message): return .message(.data(message))
      case .trailingMetadata(let trailers): return .status(Status(code: .ok, message: ""), trailers)
      case nil: return nil
      }
    } catch {
      return try Self.status(of: error)
    }
  }

  /// The status a server sent, when `error` is one; `error` itself otherwise.
  private static func status(of error: any Error) throws -> ResponsePart {
    guard let rpcError = error as? RPCError, let trailers = GRPCError.serverTrailers(in: error)
    else { throw error }
    return .status(Status(code: Status.Code(rpcError.code), message: rpcError.message), trailers)
  }
}
