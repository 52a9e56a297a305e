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
    self = bytes.withUnsafeBytes { Self(in: $0, at: 0)! }
  }

  /// The header at `index` of `buffer` (an index of the buffer, not of its readable bytes), read
  /// in place; `nil` unless its 9 bytes are all within the buffer's readable bytes.
  init?(in buffer: ByteBuffer, at index: Int) {
    let offset = index - buffer.readerIndex
    guard let header = buffer.withUnsafeReadableBytes({ Self(in: $0, at: offset) }) else {
      return nil
    }
    self = header
  }

  /// The header at `offset` of `bytes`; `nil` unless its 9 bytes are all within `bytes`.
  ///
  /// For the handlers that walk every frame header of a read: one bounds check per header.
  init?(in bytes: UnsafeRawBufferPointer, at offset: Int) {
    guard offset >= 0, bytes.count - offset >= Self.size else { return nil }
    self.payloadLength =
      Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
    self.type = bytes[offset + 3]
    self.flags = bytes[offset + 4]
    let streamID =
      UInt32(bytes[offset + 5]) << 24 | UInt32(bytes[offset + 6]) << 16
      | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8])
    self.streamID = streamID & 0x7fff_ffff
  }
}
