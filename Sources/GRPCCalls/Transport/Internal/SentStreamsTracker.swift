internal import NIOCore
internal import NIOHTTP2

/// Notes the highest stream whose HEADERS the client actually wrote to a connection, so that a
/// stream that never left (``StreamEndInterpreter``) can be told from one the server may have
/// seen, and whether the client sent a GOAWAY.
///
/// swift-nio-http2 gives a stream its ID when the stream writes, but holds the HEADERS of
/// streams past the server's concurrency limit in a buffer of its own; a connection that closes
/// then takes them with it, and the transport reports each as "Stream unexpectedly closed",
/// like a stream the server dropped. Only the bytes on their way to the socket tell the two
/// apart. This handler sits just before the HTTP/2 handler (after TLS) and walks the frame
/// headers of what the HTTP/2 handler writes (RFC 9113 §4.1), after the 24-byte client
/// connection preface, passing every byte on untouched.
///
/// Being before the HTTP/2 handler, it also learns that the connection went down before the
/// connection's streams do, and whether the client closed it, so that a call it ends can be
/// told which side did, and when the HTTP/2 handler is handling what the server sent
/// (``ClosedStreamFrameFilter``).
final class SentStreamsTracker: ChannelDuplexHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  typealias InboundOut = ByteBuffer
  typealias OutboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer

  private let record: ConnectionRecord
  private var walker = FrameHeaderWalker(skipping: 24)

  init(record: ConnectionRecord) {
    self.record = record
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    let record = self.record
    self.walker.walk(
      self.unwrapOutboundIn(data),
      onGoAway: { debugData in
        record.sentGoAwayDebugData = debugData
      },
      onHeader: { type, streamID in
        if type == 0x1, streamID > record.highestSentStreamID {
          record.highestSentStreamID = streamID
        } else if type == 0x7 {
          record.sentGoAway = true
        }
      }
    )
    context.write(data, promise: promise)
  }

  func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    let reading = self.record.isReadingFromServer
    self.record.isReadingFromServer = true
    context.fireChannelRead(data)
    self.record.isReadingFromServer = reading
  }

  func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
    // A close asked for once the connection is down (the transport closes its channel when it
    // has read the connection's last event, whatever ended it) chose nothing.
    if !self.record.isDown {
      self.record.closedByClient = true
    }
    context.close(mode: mode, promise: promise)
  }

  func channelInactive(context: ChannelHandlerContext) {
    self.record.hadStreamsWhenDown = self.record.hasStreams
    self.record.isDown = true
    context.fireChannelInactive()
  }
}

/// Finds the frame headers in a byte stream cut into arbitrary pieces, and the start of each
/// GOAWAY's debug data (which says why the sender is closing).
struct FrameHeaderWalker {
  private var skip: Int
  private var header: [UInt8] = []
  private var payloadLeft = 0
  /// The GOAWAY payload read so far, while one is being read.
  private var goAway: [UInt8]?
  private var goAwayLeft = 0

  /// How much of a GOAWAY's payload is read: its last stream ID and error code, then the start
  /// of its debug data.
  static let goAwayPrefix = 8 + 64

  /// - Parameter skipping: Bytes before the first frame (a connection preface).
  init(skipping: Int) {
    self.skip = skipping
  }

  /// Reads the next piece of the stream, calling `onHeader` with each frame's type and stream ID
  /// and `onGoAway` with the start of each GOAWAY's debug data.
  mutating func walk(
    _ buffer: ByteBuffer,
    onGoAway: (_ debugData: String) -> Void = { _ in },
    onHeader: (_ type: UInt8, _ streamID: UInt32) -> Void
  ) {
    var index = buffer.readerIndex
    let end = buffer.writerIndex
    while index < end {
      if self.skip > 0 {
        let taken = min(self.skip, end - index)
        self.skip -= taken
        index += taken
      } else if self.payloadLeft > 0 {
        let taken = min(self.payloadLeft, end - index)
        if self.goAway != nil {
          let kept = min(taken, self.goAwayLeft)
          self.goAway! += buffer.getBytes(at: index, length: kept) ?? []
          self.goAwayLeft -= kept
        }
        self.payloadLeft -= taken
        index += taken
        if let payload = self.goAway, self.goAwayLeft == 0 {
          self.goAway = nil
          Self.report(goAway: payload, to: onGoAway)
        }
      } else {
        let frame: HTTP2FrameHeader
        if self.header.isEmpty, let whole = HTTP2FrameHeader(in: buffer, at: index) {
          // The whole header is in this piece, as it nearly always is: read it in place.
          frame = whole
          index += HTTP2FrameHeader.size
        } else {
          let taken = min(HTTP2FrameHeader.size - self.header.count, end - index)
          self.header += buffer.getBytes(at: index, length: taken) ?? []
          index += taken
          guard self.header.count == HTTP2FrameHeader.size else { continue }
          frame = HTTP2FrameHeader(self.header)
          self.header = []
        }
        self.payloadLeft = frame.payloadLength
        if frame.type == 0x7, self.payloadLeft > 0 {
          self.goAway = []
          self.goAwayLeft = min(self.payloadLeft, Self.goAwayPrefix)
        }
        onHeader(frame.type, frame.streamID)
      }
    }
  }

  private static func report(
    goAway payload: [UInt8],
    to onGoAway: (_ debugData: String) -> Void
  ) {
    // A GOAWAY's payload is at least 8 bytes (RFC 9113 §6.8); a shorter one is the HTTP/2
    // handler's to reject, not ours to read.
    guard payload.count >= 8 else { return }
    onGoAway(String(decoding: payload[8...], as: UTF8.self))
  }
}
