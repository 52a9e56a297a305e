import Logging
import NIOCore
import NIOEmbedded
import NIOHTTP2
import Testing

@testable import GRPCCalls

/// The keepalive pacer between an embedded channel's outbound end and a stand-in for the
/// transport's connection handler. No I/O.
@Suite("Keepalive pacer (no I/O)")
struct KeepalivePacerTests {
  /// What reaches the transport's connection handler, in order.
  enum Event: Equatable {
    case read(HTTP2Frame.FramePayload)
    case readComplete

    static func == (lhs: Event, rhs: Event) -> Bool {
      switch (lhs, rhs) {
      case (.readComplete, .readComplete):
        return true
      case (.read(.ping(let left, let leftAck)), .read(.ping(let right, let rightAck))):
        return left == right && leftAck == rightAck
      default:
        return false
      }
    }
  }

  /// Stands in for the transport's connection handler (grpc-swift-nio-transport's
  /// `ClientConnectionHandler`), which holds back its flushes from the first read until the
  /// read completes.
  final class TransportStandIn: ChannelInboundHandler, @unchecked Sendable {
    typealias InboundIn = HTTP2Frame
    var events: [Event] = []

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
      self.events.append(.read(self.unwrapInboundIn(data).payload))
    }

    func channelReadComplete(context: ChannelHandlerContext) {
      self.events.append(.readComplete)
    }
  }

  static let payload = HTTP2PingData(withInteger: 42)

  /// A channel with a pacer over `record` and a stand-in for the transport after it.
  static func channel(
    record: ConnectionRecord,
    permitWithoutCalls: Bool = false
  ) throws -> (EmbeddedChannel, TransportStandIn) {
    let standIn = TransportStandIn()
    let backoff = KeepaliveBackoff(
      permitWithoutCalls: permitWithoutCalls,
      interval: 1,
      logger: Logger(label: "test")
    )
    let channel = EmbeddedChannel()
    try channel.pipeline.syncOperations.addHandlers(
      KeepalivePacer(record: record, backoff: backoff),
      standIn
    )
    return (channel, standIn)
  }

  @Test("a PING held back on an idle connection is answered as a read that completes")
  func heldBackPingIsAReadThatCompletes() throws {
    let (channel, standIn) = try Self.channel(record: ConnectionRecord())
    let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(Self.payload, ack: false))
    try channel.writeAndFlush(ping).wait()
    channel.embeddedEventLoop.run()

    #expect(try channel.readOutbound(as: HTTP2Frame.self) == nil, "nothing goes on the wire")
    // Without the read-complete, the transport's handler would hold back its flushes for good:
    // the next PING, sent once a call opens, would never leave, and its timeout would close the
    // connection under the call.
    #expect(standIn.events == [.read(.ping(Self.payload, ack: true)), .readComplete])
    _ = try channel.finish()
  }

  @Test("a PING while a stream is open, or with pings permitted without calls, goes on the wire")
  func pingWithACallLeaves() throws {
    let record = ConnectionRecord()
    #expect(record.takeSlot())
    for (record, permitted) in [(record, false), (ConnectionRecord(), true)] {
      let (channel, standIn) = try Self.channel(record: record, permitWithoutCalls: permitted)
      let ping = HTTP2Frame(streamID: .rootStream, payload: .ping(Self.payload, ack: false))
      try channel.writeAndFlush(ping).wait()
      channel.embeddedEventLoop.run()

      let sent = try channel.readOutbound(as: HTTP2Frame.self)
      guard case .ping(let data, ack: false)? = sent?.payload else {
        Issue.record(
          "no PING written (permitted without calls: \(permitted)): \(String(describing: sent))"
        )
        continue
      }
      #expect(data == Self.payload)
      #expect(standIn.events.isEmpty)
      _ = try channel.finish()
    }
  }
}
