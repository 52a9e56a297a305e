internal import NIOCore
internal import NIOHTTP2

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
  /// The start of the debug data of the client's GOAWAY, which says why it closed (the
  /// transport's keepalive, say: ``CoreFailure/isKeepaliveExpiry(goAwayDebugData:)``).
  var sentGoAwayDebugData: String?
  /// Whether the HTTP/2 handler is handling bytes read from the server: an error it raises then
  /// comes from what the server sent (``ClosedStreamFrameFilter``).
  var isReadingFromServer = false
  /// Whether the client asked to close the connection while it was up.
  var closedByClient = false
  /// Whether the server's SETTINGS came: the connection was established.
  var established = false
  /// The server's address, once established (NIO forgets it when the connection closes).
  var server: ServerAddress?
  /// Whether the connection went down (its streams are about to end with it).
  var isDown = false
  /// Whether calls were using the connection when it went down.
  var hadStreamsWhenDown = false
  /// The first error raised on the connection after the HTTP/2 handler, which closes it (a
  /// certificate that does not hold the name asked for, say).
  var connectionError: (any Error)?
  /// How many streams the server takes at once: its SETTINGS_MAX_CONCURRENT_STREAMS, or the
  /// 100 swift-nio-http2 assumes until the server names one.
  var maxConcurrentStreams = 100
  /// Streams that went on to the HTTP/2 handler and have not ended.
  private(set) var openStreams = 0
  /// Streams that flushed while ``openStreams`` was at the limit, in the order they did: a
  /// queue, as thousands of calls may wait on one connection.
  private var waiting = CircularBuffer<StreamEndInterpreter>()
  private var admissionScheduled = false
  /// Whether the connection's last open stream ended a moment ago and the transport has yet to
  /// decide whether to close it (``settle(on:)``); streams wait meanwhile.
  private var settling = false

  /// Whether either side has begun closing the connection (a GOAWAY, or the client asking to
  /// close it), or it went down, so that no new stream may start on it: swift-nio-http2 fails
  /// the whole connection when one does once its last stream has closed.
  var isClosing: Bool {
    self.lastGoAway != nil || self.sentGoAway || self.closedByClient || self.isDown
  }

  /// Whether calls are using the connection: streams open, or waiting for a slot.
  var hasStreams: Bool { self.openStreams > 0 || !self.waiting.isEmpty }

  /// Whether the connection, once established, went down under calls without a GOAWAY from the
  /// server or a close the client chose (the transport letting it go): it broke, and the
  /// transport reconnects. A client close that sent a GOAWAY (a connection error, a keepalive
  /// timeout) or that follows an error is a break.
  var brokeUnderCalls: Bool {
    self.isDown && self.hadStreamsWhenDown && self.wentAwayUnannounced
  }

  /// Whether the connection, once established, went away with no GOAWAY from the server and
  /// no close the client chose (the transport letting it go quietly, as its balancer does): the
  /// server died, the network broke, or the client closed it for an error.
  var wentAwayUnannounced: Bool {
    let clientLetItGo = self.closedByClient && !self.sentGoAway && self.connectionError == nil
    return self.established && self.lastGoAway == nil && !clientLetItGo
  }

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
    guard !self.settling, self.waiting.isEmpty, self.openStreams < self.maxConcurrentStreams else {
      return false
    }
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
    if self.openStreams == 0 {
      self.settle(on: eventLoop)
    } else {
      self.scheduleAdmission(on: eventLoop)
    }
  }

  /// Holds new streams back until the transport has acted on the end of the connection's last
  /// open stream.
  ///
  /// A transport closing the connection gracefully (its load balancer let the connection go)
  /// closes it when its count of open streams reaches zero, on the next event-loop tick, without
  /// looking again: a stream that starts in between dies with the connection, after its HEADERS
  /// left. swift-nio-http2 ends the stream's channel (this record's count) just before it tells
  /// the transport, so a task this record enqueues from there runs before the transport's close;
  /// one enqueued by that task runs after it (an event loop runs its tasks in order). By then the
  /// close, if any, has passed ``SentStreamsTracker`` (``closedByClient``) and the waiting
  /// streams are refused, to run on another connection; otherwise they start.
  private func settle(on eventLoop: any EventLoop) {
    guard !self.settling else { return }
    self.settling = true
    let record = NIOLoopBound(self, eventLoop: eventLoop)
    eventLoop.execute {
      eventLoop.execute {
        record.value.settling = false
        record.value.admitWaiting()
      }
    }
  }

  /// Lets waiting streams take the slots that are free, on the next tick of `eventLoop`.
  func scheduleAdmission(on eventLoop: any EventLoop) {
    guard !self.waiting.isEmpty, !self.admissionScheduled, !self.settling else { return }
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
      guard !self.settling, self.openStreams < self.maxConcurrentStreams else { return }
      let stream = self.waiting.removeFirst()
      self.openStreams += 1
      stream.admit()
    }
  }

  /// Refuses every waiting stream: the connection is closing, and none of them left.
  func refuseWaiting() {
    let waiting = self.waiting
    self.waiting.removeAll()
    for stream in waiting {
      stream.refuse()
    }
  }
}
