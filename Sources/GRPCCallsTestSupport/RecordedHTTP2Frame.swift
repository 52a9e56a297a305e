/// The HTTP/2 frames in a client's byte stream (RFC 9113 §4.1), for tests that check what went
/// out on the wire.
public struct RecordedHTTP2Frame: Equatable, Sendable, CustomStringConvertible {
  public static let data: UInt8 = 0x0
  public static let headers: UInt8 = 0x1
  public static let rstStream: UInt8 = 0x3
  public static let ping: UInt8 = 0x6
  public static let endStream: UInt8 = 0x1
  /// The CANCEL error code of an RST_STREAM or GOAWAY (RFC 9113 §7).
  public static let cancel: UInt32 = 0x8

  public var type: UInt8
  public var flags: UInt8
  public var streamID: UInt32
  public var length: Int
  /// Where the frame's header starts in the parsed bytes.
  public var offset = 0
  /// An RST_STREAM's error code.
  public var errorCode: UInt32?

  /// Where the frame ends in the parsed bytes.
  public var end: Int { self.offset + 9 + self.length }

  public var isData: Bool { self.type == Self.data }
  /// An RST_STREAM: the client ended the stream early.
  public var isReset: Bool { self.type == Self.rstStream }
  public var endsStream: Bool {
    (self.type == Self.data || self.type == Self.headers) && self.flags & Self.endStream != 0
  }

  public var description: String {
    "type \(self.type) flags \(self.flags) stream \(self.streamID) length \(self.length)"
      + (self.errorCode.map { " error \($0)" } ?? "")
  }

  /// Parses a client's bytes: the connection preface, then frames; a partial frame at the end
  /// is left out.
  public static func parse(clientBytes bytes: [UInt8]) -> [RecordedHTTP2Frame] {
    let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    guard bytes.starts(with: preface) else { return [] }
    var frames: [RecordedHTTP2Frame] = []
    var offset = preface.count
    while offset + 9 <= bytes.count {
      let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
      let streamID =
        (UInt32(bytes[offset + 5]) & 0x7f) << 24 | UInt32(bytes[offset + 6]) << 16
        | UInt32(bytes[offset + 7]) << 8 | UInt32(bytes[offset + 8])
      guard offset + 9 + length <= bytes.count else { break }
      var frame = RecordedHTTP2Frame(
        type: bytes[offset + 3],
        flags: bytes[offset + 4],
        streamID: streamID,
        length: length,
        offset: offset
      )
      if frame.isReset, length == 4 {
        frame.errorCode = bytes[(offset + 9) ..< (offset + 13)].reduce(0) { $0 << 8 | UInt32($1) }
      }
      frames.append(frame)
      offset += 9 + length
    }
    return frames
  }
}
