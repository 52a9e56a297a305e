internal import NIOCore

/// An HTTP/2 frame header (RFC 9113 §4.1), as the handlers that watch the raw bytes read it to
/// keep their place: a 24-bit payload length, a type, flags and a 31-bit stream ID.
struct HTTP2FrameHeader: Equatable {
  /// The bytes of a header.
  static let size = 9

  var payloadLength: Int
  var type: UInt8
  var flags: UInt8
  var streamID: UInt32

  /// The header made of `bytes`, which hold ``size`` bytes: one that came split over reads.
  init(_ bytes: [UInt8]) {
    precondition(bytes.count == Self.size, "a frame header is 9 bytes")
    self = Self(in: ByteBuffer(bytes: bytes), at: 0)!
  }

  /// The header at `index` of `buffer`, read in place; `nil` unless its 9 bytes are all within
  /// the buffer's readable bytes.
  init?(in buffer: ByteBuffer, at index: Int) {
    guard let high = buffer.getInteger(at: index, as: UInt16.self),
      let low = buffer.getInteger(at: index + 2, as: UInt8.self),
      let type = buffer.getInteger(at: index + 3, as: UInt8.self),
      let flags = buffer.getInteger(at: index + 4, as: UInt8.self),
      let streamID = buffer.getInteger(at: index + 5, as: UInt32.self)
    else { return nil }
    self.payloadLength = Int(high) << 8 | Int(low)
    self.type = type
    self.flags = flags
    self.streamID = streamID & 0x7fff_ffff
  }
}
