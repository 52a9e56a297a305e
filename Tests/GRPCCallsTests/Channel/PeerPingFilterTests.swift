import NIOCore
import Testing

@testable import GRPCCalls

@Suite("Peer PING filter (no I/O)")
struct PeerPingFilterTests {
  /// A frame: 9 header bytes, then the payload.
  static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, payload: [UInt8]) -> [UInt8]
  {
    let length = payload.count
    return [
      UInt8(length >> 16 & 0xff), UInt8(length >> 8 & 0xff), UInt8(length & 0xff), type, flags,
      UInt8(stream >> 24 & 0x7f), UInt8(stream >> 16 & 0xff), UInt8(stream >> 8 & 0xff),
      UInt8(stream & 0xff),
    ] + payload
  }

  static let settings = frame(type: 0x4, payload: [0, 3, 0, 0, 0, 100])
  static let data = frame(type: 0x0, flags: 0x1, stream: 1, payload: Array(repeating: 7, count: 40))
  static let ping = frame(type: 0x6, payload: [1, 2, 3, 4, 5, 6, 7, 8])
  static let pingAck = frame(type: 0x6, flags: 0x1, payload: [9, 9, 9, 9, 9, 9, 9, 9])
  static let emptySettingsAck = frame(type: 0x4, flags: 0x1, payload: [])

  /// Feeds `bytes` split at `cuts` and returns what passed and the PINGs found.
  static func run(_ bytes: [UInt8], cuts: [Int]) -> (pass: [UInt8], pings: [UInt64]) {
    var filter = PeerPingFilter()
    var passed: [UInt8] = []
    var pings: [UInt64] = []
    var start = 0
    for cut in cuts.sorted() + [bytes.count] where cut >= start {
      let output = filter.process(ByteBuffer(bytes: bytes[start ..< cut]))
      for buffer in output.pass {
        passed += buffer.readableBytesView
      }
      pings += output.pings
      start = cut
    }
    return (passed, pings)
  }

  @Test(
    "PING requests are taken out and every other frame passes unchanged, however the reads split"
  )
  func takesOutPingsAtEveryCut() {
    let stream =
      Self.settings + Self.ping + Self.data + Self.pingAck + Self.emptySettingsAck + Self.ping
      + Self.data
    let expected = Self.settings + Self.data + Self.pingAck + Self.emptySettingsAck + Self.data
    for first in 0 ... stream.count {
      for second in stride(from: first, through: stream.count, by: 7) {
        let (pass, pings) = Self.run(stream, cuts: [first, second])
        #expect(pass == expected, "cuts at \(first), \(second)")
        #expect(
          pings == [0x0102_0304_0506_0708, 0x0102_0304_0506_0708],
          "cuts at \(first), \(second)"
        )
      }
    }
  }

  @Test("a read without a PING request passes on in one piece, ending inside a payload or not")
  func readWithoutPingPassesWhole() {
    let stream = Self.settings + Self.data + Self.pingAck + Self.data
    for cut in [stream.count, stream.count - 20, stream.count - 40] {
      var filter = PeerPingFilter()
      let output = filter.process(ByteBuffer(bytes: stream[..<cut]))
      #expect(output.pass.map { Array($0.readableBytesView) } == [Array(stream[..<cut])])
      #expect(output.pings.isEmpty)
    }
  }

  @Test("a read whose buffer starts past its storage's first byte is cut where its frames are")
  func readerIndexPastStart() {
    let stream = Self.settings + Self.ping + Self.data
    var buffer = ByteBuffer(bytes: [0xEE, 0xEE, 0xEE] + stream)
    buffer.moveReaderIndex(forwardBy: 3)
    var filter = PeerPingFilter()
    let output = filter.process(buffer)
    #expect(
      output.pass.map { Array($0.readableBytesView) } == [Self.settings, Self.data]
    )
    #expect(output.pings == [0x0102_0304_0506_0708])
  }

  @Test("byte by byte")
  func byteByByte() {
    let stream = Self.ping + Self.data + Self.ping
    let (pass, pings) = Self.run(stream, cuts: Array(1 ..< stream.count))
    #expect(pass == Self.data)
    #expect(pings.count == 2)
  }

  @Test("malformed PINGs (on a stream, or not 8 bytes) pass on for the HTTP/2 handler to reject")
  func malformedPingsPass() {
    let onStream = Self.frame(type: 0x6, stream: 3, payload: [1, 2, 3, 4, 5, 6, 7, 8])
    let short = Self.frame(type: 0x6, payload: [1, 2, 3])
    let (pass, pings) = Self.run(onStream + short, cuts: [4])
    #expect(pass == onStream + short)
    #expect(pings.isEmpty)
  }

  @Test("the acknowledgement is a PING ACK frame with the same payload")
  func acknowledgement() {
    let ack = PeerPingFilter.acknowledgement(
      of: 0x0102_0304_0506_0708,
      allocator: ByteBufferAllocator()
    )
    #expect(
      Array(ack.readableBytesView)
        == Self.frame(type: 0x6, flags: 0x1, payload: [1, 2, 3, 4, 5, 6, 7, 8])
    )
  }
}
