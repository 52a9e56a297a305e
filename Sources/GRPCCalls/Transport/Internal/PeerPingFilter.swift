internal import NIOCore

/// Finds the peer's PING requests in the HTTP/2 bytes a server sends, so that they can be
/// answered before the HTTP/2 handler counts them; every other byte passes through untouched.
///
/// It reads only frame headers (RFC 9113 §4.1: a 24-bit length, a type, flags and a stream ID)
/// to keep its place, and looks inside one kind of frame: a PING (type 6) without the ACK flag,
/// on stream 0, with its 8-byte payload. Anything else, a PING ACK included (the transport's
/// keepalive waits for those) and a malformed PING (left for the HTTP/2 handler to reject),
/// passes on as it came, split only where a PING was taken out. A server's bytes start with its
/// first frame: the connection preface is the client's alone.
///
/// ```
///            9 header bytes: a PING request         8 payload bytes
///  ┌────────┐ ─────────────────────────────────▶ ┌──────┐ ──────────▶ back to header
///  │ header │                                    │ ping │             (payload answered)
///  └────────┘ ─────────────────────────────────▶ ┌─────────┐ length bytes passed
///            9 header bytes: any other frame     │ passing │ ──────────▶ back to header
///                                                └─────────┘
/// ```
struct PeerPingFilter: Sendable {
  /// What one read of the server's bytes gives.
  struct Output {
    /// The bytes to pass on to the HTTP/2 handler, in order.
    var pass: [ByteBuffer] = []
    /// The payloads of the PING requests taken out, in order, to acknowledge.
    var pings: [UInt64] = []
  }

  private enum State: Sendable {
    /// Reading a frame header; the bytes of it that came in earlier reads are held here (not
    /// yet passed on: the frame may be a PING to take out).
    case header(held: [UInt8])
    /// Passing the rest of a frame that is not a PING request.
    case passing(remaining: Int)
    /// Reading a PING request's payload.
    case ping(payload: [UInt8])
  }

  static let headerLength = HTTP2FrameHeader.size
  static let pingType: UInt8 = 0x6
  static let ackFlag: UInt8 = 0x1
  static let pingPayloadLength = 8

  private var state = State.header(held: [])

  /// Reads `buffer`, the next bytes from the server.
  mutating func process(_ buffer: ByteBuffer) -> Output {
    buffer.withUnsafeReadableBytes { self.process(buffer, readable: $0) }
  }

  /// Reads `buffer`, whose readable bytes are `readable`; offsets below count from its reader
  /// index.
  private mutating func process(_ buffer: ByteBuffer, readable: UnsafeRawBufferPointer) -> Output {
    var output = Output()
    let end = readable.count
    var index = 0
    // Where the run of bytes to pass on that is still open starts.
    var passFrom = index
    func passRun(upTo runEnd: Int) {
      if runEnd > passFrom,
        let slice = buffer.getSlice(at: buffer.readerIndex + passFrom, length: runEnd - passFrom)
      {
        output.pass.append(slice)
      }
      passFrom = runEnd
    }

    while index < end {
      switch self.state {
      case .passing(let remaining):
        let taken = min(remaining, end - index)
        index += taken
        self.state = remaining == taken ? .header(held: []) : .passing(remaining: remaining - taken)

      case .header(let held) where held.isEmpty:
        // The whole header is in this read, as it nearly always is: read it in place, and step
        // over a frame that is not a PING request without a change of state.
        guard let frame = HTTP2FrameHeader(in: readable, at: index) else {
          // The header goes on in the next read: hold its start back until then.
          passRun(upTo: index)
          self.state = .header(held: Array(readable[index ..< end]))
          index = end
          passFrom = end
          continue
        }
        let payloadStart = index + Self.headerLength
        if Self.isPingRequest(frame) {
          // Take the frame out: pass what came before its header in this read.
          passRun(upTo: index)
          index = payloadStart
          passFrom = index
          self.state = .ping(payload: [])
        } else if frame.payloadLength <= end - payloadStart {
          index = payloadStart + frame.payloadLength
        } else {
          index = payloadStart
          self.state = .passing(remaining: frame.payloadLength)
        }

      case .header(var held):
        // The header began in an earlier read, so this is the start of the read.
        let heldBefore = held.count
        let taken = min(Self.headerLength - heldBefore, end - index)
        held += readable[index ..< index + taken]
        if held.count < Self.headerLength {
          index += taken
          passFrom = index
          self.state = .header(held: held)
          continue
        }
        let frame = HTTP2FrameHeader(held)
        if Self.isPingRequest(frame) {
          index += taken
          passFrom = index
          self.state = .ping(payload: [])
        } else {
          // Its held bytes go first; this read's bytes follow from its start.
          output.pass.append(ByteBuffer(bytes: held[..<heldBefore]))
          index += taken
          self.state =
            frame.payloadLength == 0 ? .header(held: []) : .passing(remaining: frame.payloadLength)
        }

      case .ping(var payload):
        let taken = min(Self.pingPayloadLength - payload.count, end - index)
        payload += readable[index ..< index + taken]
        index += taken
        passFrom = index
        if payload.count == Self.pingPayloadLength {
          output.pings.append(payload.reduce(0) { $0 << 8 | UInt64($1) })
          self.state = .header(held: [])
        } else {
          self.state = .ping(payload: payload)
        }
      }
    }
    passRun(upTo: end)
    return output
  }

  /// Whether `frame` is a PING request, the kind the filter takes out.
  private static func isPingRequest(_ frame: HTTP2FrameHeader) -> Bool {
    frame.type == Self.pingType && frame.flags & Self.ackFlag == 0 && frame.streamID == 0
      && frame.payloadLength == Self.pingPayloadLength
  }

  /// The PING ACK frame that answers a PING request with `payload` (RFC 9113 §6.7).
  static func acknowledgement(of payload: UInt64, allocator: ByteBufferAllocator) -> ByteBuffer {
    var frame = allocator.buffer(capacity: Self.headerLength + Self.pingPayloadLength)
    frame.writeBytes([0, 0, UInt8(Self.pingPayloadLength), Self.pingType, Self.ackFlag, 0, 0, 0, 0])
    frame.writeInteger(payload)
    return frame
  }
}
