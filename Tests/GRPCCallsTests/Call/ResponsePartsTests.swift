import Foundation
import GRPCCore
import Testing

@testable import GRPCCalls

/// The `GRPCClient` path's response turned back into parts, as the raw path reads them: a
/// server's status is a part, a failure on this side is a throw.
@Suite("Response parts of a GRPCClient response (no I/O)")
struct ResponsePartsTests {
  typealias BodyPart = StreamingClientResponse<Data>.Contents.BodyPart

  private static func accepted(
    _ parts: [BodyPart],
    endingWith error: (any Error)? = nil
  ) -> StreamingClientResponse<Data> {
    let (stream, continuation) = AsyncThrowingStream<BodyPart, any Error>.makeStream()
    for part in parts {
      continuation.yield(part)
    }
    continuation.finish(throwing: error)
    return StreamingClientResponse(
      metadata: ["h": "1"],
      bodyParts: RPCAsyncSequence(wrapping: stream)
    )
  }

  @Test("headers, messages, then the trailers as an OK status, then the end")
  func acceptedResponse() async throws {
    var parts = ClientResponseParts(
      Self.accepted([.message(Data([1])), .message(Data([2])), .trailingMetadata(["t": "x"])])
    )
    guard case .headers(let headers)? = try await parts.next() else {
      Issue.record("expected headers first")
      return
    }
    #expect(Array(headers[stringValues: "h"]) == ["1"])
    for expected in [Data([1]), Data([2])] {
      guard case .message(let message)? = try await parts.next() else {
        Issue.record("expected message \(expected)")
        return
      }
      #expect(message.data == expected)
    }
    guard case .status(let status, let trailers)? = try await parts.next() else {
      Issue.record("expected the status")
      return
    }
    #expect(status.code == .ok)
    #expect(Array(trailers[stringValues: "t"]) == ["x"])
    let end = try await parts.next()
    #expect(end == nil)
  }

  @Test(
    "the transport's message bytes are passed on as they are, for a marshaller to parse in place"
  )
  func transportBytesKept() async throws {
    let (stream, source) = AsyncThrowingStream.makeStream(of: RPCResponsePart<[UInt8]>.self)
    source.yield(.metadata([:]))
    source.yield(.message([1, 2, 3]))
    source.finish()
    var parts = TransportResponseParts(RPCAsyncSequence(wrapping: stream))
    _ = try await parts.next()
    guard case .message(.transport(let bytes))? = try await parts.next() else {
      Issue.record("expected the transport's bytes")
      return
    }
    #expect(bytes as? [UInt8] == [1, 2, 3])
  }

  @Test("a trailers-only answer from the server is its status and trailers")
  func trailersOnlyFromServer() async throws {
    var parts = ClientResponseParts(
      StreamingClientResponse(
        error: RPCError(code: .notFound, message: "no such thing", metadata: ["t": "y"])
      )
    )
    guard case .status(let status, let trailers)? = try await parts.next() else {
      Issue.record("expected the server's status")
      return
    }
    #expect(status.code == .notFound)
    #expect(status.message == "no such thing")
    #expect(Array(trailers[stringValues: "t"]) == ["y"])
  }

  @Test("a server's status that ends the body is a status part")
  func statusAfterMessages() async throws {
    var parts = ClientResponseParts(
      Self.accepted(
        [.message(Data([1]))],
        endingWith: RPCError(code: .aborted, message: "stop", metadata: ["t": "z"])
      )
    )
    _ = try await parts.next()
    _ = try await parts.next()
    guard case .status(let status, let trailers)? = try await parts.next() else {
      Issue.record("expected the server's status")
      return
    }
    #expect(status.code == .aborted)
    #expect(Array(trailers[stringValues: "t"]) == ["z"])
  }

  @Test("a failure on this side (an error with a cause) is thrown, before or after the headers")
  func localFailuresThrow() async throws {
    let local = RPCError(code: .unavailable, message: "gone", cause: CancellationError())
    var rejected = ClientResponseParts(StreamingClientResponse(error: local))
    await #expect(throws: RPCError.self) { try await rejected.next() }

    var failed = ClientResponseParts(Self.accepted([], endingWith: local))
    _ = try await failed.next()
    await #expect(throws: RPCError.self) { try await failed.next() }
  }
}
