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

  @Test("a buffer that ends inside the header, or an index before its readable bytes, gives none")
  func shortBuffer() {
    let buffer = ByteBuffer(bytes: Self.bytes.dropLast())
    #expect(HTTP2FrameHeader(in: buffer, at: 0) == nil)
    var read = ByteBuffer(bytes: [0xAA] + Self.bytes)
    read.moveReaderIndex(forwardBy: 1)
    #expect(HTTP2FrameHeader(in: read, at: 0) == nil)
    #expect(HTTP2FrameHeader(in: read, at: 1) == HTTP2FrameHeader(Self.bytes))
  }

  @Test("read from raw bytes at an offset, as the handlers that walk a read's frames do")
  func readsRawBytes() {
    let bytes: [UInt8] = [0xAA] + Self.bytes
    bytes.withUnsafeBytes { raw in
      #expect(HTTP2FrameHeader(in: raw, at: 1) == HTTP2FrameHeader(Self.bytes))
      #expect(HTTP2FrameHeader(in: raw, at: 2) == nil)
      #expect(HTTP2FrameHeader(in: raw, at: -1) == nil)
    }
  }
}
