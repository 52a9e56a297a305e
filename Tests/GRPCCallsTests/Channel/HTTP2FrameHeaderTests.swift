import NIOCore
import Testing

@testable import GRPCCalls

@Suite("HTTP/2 frame header")
struct HTTP2FrameHeaderTests {
  /// A HEADERS frame header: 0x01_02_03 payload bytes, END_HEADERS | END_STREAM, and stream
  /// 0x7f_00_00_05 with the reserved bit set (ignored on receipt, RFC 9113 §4.1).
  static let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x01, 0x05, 0xff, 0x00, 0x00, 0x05]

  @Test("read in place and from held bytes alike, without the reserved bit")
  func readsFields() throws {
    var buffer = ByteBuffer(bytes: [0xAA, 0xBB] + Self.bytes)
    buffer.moveReaderIndex(forwardBy: 1)
    let inPlace = try #require(HTTP2FrameHeader(in: buffer, at: 2))
    #expect(inPlace == HTTP2FrameHeader(Self.bytes))
    #expect(inPlace.payloadLength == 0x01_02_03)
    #expect(inPlace.type == 0x01)
    #expect(inPlace.flags == 0x05)
    #expect(inPlace.streamID == 0x7f00_0005)
  }

  @Test("a buffer that ends inside the header gives none")
  func shortBuffer() {
    let buffer = ByteBuffer(bytes: Self.bytes.dropLast())
    #expect(HTTP2FrameHeader(in: buffer, at: 0) == nil)
  }
}
