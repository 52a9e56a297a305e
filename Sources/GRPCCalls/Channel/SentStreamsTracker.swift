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
final class SentStreamsTracker: ChannelOutboundHandler, RemovableChannelHandler {
  typealias OutboundIn = ByteBuffer
  typealias OutboundOut = ByteBuffer

  private let record: ConnectionRecord
  private var walker = FrameHeaderWalker(skipping: 24)

  init(record: ConnectionRecord) {
    self.record = record
  }

  func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
    let record = self.record
    self.walker.walk(self.unwrapOutboundIn(data)) { type, streamID in
      if type == 0x1, streamID > record.highestSentStreamID {
        record.highestSentStreamID = streamID
      } else if type == 0x7 {
        record.sentGoAway = true
      }
    }
    context.write(data, promise: promise)
  }
}

/// Finds the frame headers in a byte stream cut into arbitrary pieces.
struct FrameHeaderWalker {
  private var skip: Int
  private var header: [UInt8] = []
  private var payloadLeft = 0

  /// - Parameter skipping: Bytes before the first frame (a connection preface).
  init(skipping: Int) {
    self.skip = skipping
  }

  /// Reads the next piece of the stream, calling `onHeader` with each frame's type and stream ID.
  mutating func walk(_ buffer: ByteBuffer, onHeader: (_ type: UInt8, _ streamID: UInt32) -> Void) {
    var index = buffer.readerIndex
    let end = buffer.writerIndex
    while index < end {
      if self.skip > 0 {
        let taken = min(self.skip, end - index)
        self.skip -= taken
        index += taken
      } else if self.payloadLeft > 0 {
        let taken = min(self.payloadLeft, end - index)
        self.payloadLeft -= taken
        index += taken
      } else {
        let taken = min(9 - self.header.count, end - index)
        self.header += buffer.getBytes(at: index, length: taken) ?? []
        index += taken
        guard self.header.count == 9 else { continue }
        let bytes = self.header
        self.header = []
        self.payloadLeft = Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2])
        let streamID = (UInt32(bytes[5]) & 0x7f) << 24 | UInt32(bytes[6]) << 16 | UInt32(bytes[7]) << 8 | UInt32(bytes[8])
        onHeader(bytes[3], streamID)
      }
    }
  }
}

/// What a connection's handlers learnt about it: the streams that left, the server's last
/// GOAWAY, and which streams may open (the server's concurrency limit). Read and written on the
/// connection's event loop only (its streams share the loop).
final class ConnectionRecord {
  /// The highest stream ID whose HEADERS were written to the connection.
  var highestSentStreamID: UInt32 = 0
  /// The last GOAWAY from the server.
  var lastGoAway: GoAwayRecorder.GoAway?
  /// Whether the client sent a GOAWAY: it is closing the connection.
  var sentGoAway = false
  /// The first error raised on the connection after the HTTP/2 handler, which closes it (a
  /// certificate that does not hold the name asked for, say).
  var connectionError: (any Error)?
  /// How many streams the server takes at once: its SETTINGS_MAX_CONCURRENT_STREAMS, or the
  /// 100 swift-nio-http2 assumes until the server names one.
  var maxConcurrentStreams = 100
  /// Streams that went on to the HTTP/2 handler and have not ended.
  private(set) var openStreams = 0
  /// Streams that flushed while ``openStreams`` was at the limit, in the order they did.
  private var waiting: [StreamEndInterpreter] = []
  private var admissionScheduled = false

  /// Whether either side has begun closing the connection (a GOAWAY), so that no new stream may
  /// start on it: swift-nio-http2 fails the whole connection when one does once its last stream
  /// has closed.
  var isClosing: Bool { self.lastGoAway != nil || self.sentGoAway }

  /// Whether the stream `streamID` (`nil`: it never got one) never wrote its HEADERS to the
  /// connection.
  func neverSent(streamID: HTTP2StreamID?) -> Bool {
    guard let streamID else { return true }
    return UInt32(Int(streamID)) > self.highestSentStreamID
  }

  /// Whether the stream `streamID` was above the last stream ID of the server's GOAWAY, so the
  /// server did no work on it, or swift-nio-http2 dropped it for that reason (`droppedByGoAway`).
  func aboveGoAway(streamID: HTTP2StreamID?, droppedByGoAway: Bool) -> Bool {
    if droppedByGoAway { return true }
    guard let streamID, let goAway = self.lastGoAway else { return false }
    return streamID > goAway.lastStreamID
  }

  // MARK: Concurrency slots

  /// Takes a slot for a stream about to open, unless the server's limit is reached or streams
  /// wait already (they go first).
  func takeSlot() -> Bool {
    guard self.waiting.isEmpty, self.openStreams < self.maxConcurrentStreams else { return false }
    self.openStreams += 1
    return true
  }

  /// Queues `stream` for the next free slot (``StreamEndInterpreter/admit()``).
  func wait(_ stream: StreamEndInterpreter) {
    self.waiting.append(stream)
  }

  /// Takes `stream` out of the queue: it ended before it got a slot.
  func stopWaiting(_ stream: StreamEndInterpreter) {
    self.waiting.removeAll { $0 === stream }
  }

  /// Gives back an open stream's slot; the first waiting stream takes it on the next tick of
  /// `eventLoop`, outside the HTTP/2 handler's processing of the stream's end.
  func releaseSlot(on eventLoop: any EventLoop) {
    self.openStreams -= 1
    self.scheduleAdmission(on: eventLoop)
  }

  /// Lets waiting streams take the slots that are free, on the next tick of `eventLoop`.
  func scheduleAdmission(on eventLoop: any EventLoop) {
    guard !self.waiting.isEmpty, !self.admissionScheduled else { return }
    self.admissionScheduled = true
    let record = NIOLoopBound(self, eventLoop: eventLoop)
    eventLoop.execute {
      record.value.admissionScheduled = false
      record.value.admitWaiting()
    }
  }

  /// Admits waiting streams while slots are free; refuses them all once the connection is
  /// closing.
  private func admitWaiting() {
    while !self.waiting.isEmpty {
      if self.isClosing {
        self.refuseWaiting()
        return
      }
      guard self.openStreams < self.maxConcurrentStreams else { return }
      let stream = self.waiting.removeFirst()
      self.openStreams += 1
      stream.admit()
    }
  }

  /// Refuses every waiting stream: the connection is closing, and none of them left.
  func refuseWaiting() {
    let waiting = self.waiting
    self.waiting = []
    for stream in waiting {
      stream.refuse()
    }
  }
}
