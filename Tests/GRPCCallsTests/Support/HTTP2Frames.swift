/// The HTTP/2 frames in a client's byte stream (RFC 9113 §4.1), for tests that check what went
/// out on the wire.
struct HTTP2Frame: Equatable, CustomStringConvertible {
  static let data: UInt8 = 0x0
  static let headers: UInt8 = 0x1
  static let endStream: UInt8 = 0x1

  var type: UInt8
  var flags: UInt8
  var streamID: UInt32
  var length: Int
  /// Where the frame's header starts in the parsed bytes.
  var offset = 0

  /// Where the frame ends in the parsed bytes.
  var end: Int { self.offset + 9 + self.length }

  var isData: Bool { self.type == Self.data }
  var endsStream: Bool { (self.type == Self.data || self.type == Self.headers) && self.flags & Self.endStream != 0 }

  var description: String {
    "type \(self.type) flags \(self.flags) stream \(self.streamID) length \(self.length)"
  }

  /// Parses a client's bytes: the connection preface, then frames; a partial frame at the end
  /// is left out.
  static func parse(clientBytes bytes: [UInt8]) -> [HTTP2Frame] {
    let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    guard bytes.starts(with: preface) else { return [] }
    var frames: [HTTP2Frame] = []
    var offset = preface.count
    while offset + 9 <= bytes.count {
      let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
      let streamID =
        (UInt32(bytes[offset + 5]) & 0x7f) << 24 | UInt32(bytes[offset + 6]) << 16
        | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8])
      guard offset + 9 + length <= bytes.count else { break }
      frames.append(
        HTTP2Frame(type: bytes[offset + 3], flags: bytes[offset + 4], streamID: streamID, length: length, offset: offset)
      )
      offset += 9 + length
    }
    return frames
  }
}
