import NIOCore
import Testing

@testable import GRPCCalls

/// The walker that finds HTTP/2 frame headers in what the client writes, and the debug data of
/// the client's GOAWAY (which tells a keepalive expiry from other closes). No I/O.
@Suite("Walking the frames the client writes (no I/O)")
struct FrameHeaderWalkerTests {
  /// A frame with `payload` (RFC 9113 §4.1).
  static func frame(type: UInt8, stream: UInt32, payload: [UInt8]) -> [UInt8] {
    let length = payload.count
    let header: [UInt8] = [
      UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, 0,
      UInt8(stream >> 24 & 0x7f), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff),
      UInt8(stream & 0xff),
    ]
    return header + payload
  }

  /// A GOAWAY naming stream 3 as the last, with NO_ERROR and `debugData`.
  static func goAway(_ debugData: String) -> [UInt8] {
    Self.frame(type: 0x7, stream: 0, payload: [0, 0, 0, 3, 0, 0, 0, 0] + Array(debugData.utf8))
  }

  /// What the walker reports for `bytes` given in pieces of `pieceSize` bytes.
  static func walk(
    _ bytes: [UInt8],
    pieceSize: Int
  ) -> (headers: [(UInt8, UInt32)], debugData: [String]) {
    var walker = FrameHeaderWalker(skipping: 24)
    var headers: [(UInt8, UInt32)] = []
    var debugData: [String] = []
    var start = 0
    while start < bytes.count {
      let piece = ByteBuffer(bytes: bytes[start ..< min(start + pieceSize, bytes.count)])
      walker.walk(
        piece,
        onGoAway: { debugData.append($0) },
        onHeader: { headers.append(($0, $1)) }
      )
      start += pieceSize
    }
    return (headers, debugData)
  }

  static let stream: [UInt8] =
    Array(repeating: 0x50, count: 24)
    + Self.frame(type: 0x1, stream: 1, payload: [0x82, 0x86])
    + Self.frame(type: 0x0, stream: 1, payload: [0, 0, 0, 0, 0])
    + Self.goAway("keepalive_expired")
    + Self.frame(type: 0x6, stream: 0, payload: Array(repeating: 1, count: 8))

  @Test(
    "frame headers and a GOAWAY's debug data, whatever pieces the bytes come in",
    arguments: [1, 2, 7, 9, 200]
  )
  func findsFramesInAnyPieces(pieceSize: Int) {
    let (headers, debugData) = Self.walk(Self.stream, pieceSize: pieceSize)
    #expect(headers.map(\.0) == [0x1, 0x0, 0x7, 0x6])
    #expect(headers.map(\.1) == [1, 1, 0, 0])
    #expect(debugData == ["keepalive_expired"])
  }

  @Test("a long debug data is cut to its start, and the frames after it are still found")
  func longDebugDataIsCut() {
    let long = String(repeating: "x", count: 500)
    let bytes =
      Array(repeating: 0x50, count: 24) + Self.goAway(long)
      + Self.frame(type: 0x1, stream: 5, payload: [0x82])
    let (headers, debugData) = Self.walk(bytes, pieceSize: 100)
    #expect(debugData == [String(repeating: "x", count: FrameHeaderWalker.goAwayPrefix - 8)])
    #expect(headers.map(\.0) == [0x7, 0x1])
    #expect(headers.last?.1 == 5)
  }

  @Test("a GOAWAY without debug data reports an empty one; one shorter than its fixed part none")
  func emptyAndShortGoAways() {
    let bytes =
      Array(repeating: 0x50, count: 24) + Self.goAway("")
      + Self.frame(type: 0x7, stream: 0, payload: [0, 0, 0])
      + Self.frame(type: 0x7, stream: 0, payload: [])
      + Self.frame(type: 0x0, stream: 7, payload: [1, 2, 3])
    let (headers, debugData) = Self.walk(bytes, pieceSize: 3)
    #expect(debugData == [""])
    #expect(headers.map(\.0) == [0x7, 0x7, 0x7, 0x0])
  }
}
