internal import Foundation
internal import GRPCCallsInterop
internal import SwiftProtobuf

/// The scenarios of `grpc-calls bench`, with their sizes.
enum BenchScenario: String, CaseIterable, Sendable {
  case unaryLatency = "unary-latency"
  case unaryThroughput = "unary-throughput"
  case pingPong = "ping-pong"
  case largeUnary = "large-unary"
  case serverStreaming16B = "server-streaming-16b"
  case serverStreaming64K = "server-streaming-64k"

  /// The metrics a scenario reports, in table order.
  var metrics: [String] {
    self.figures + ["failures"]
  }

  /// The scenario's own figures.
  private var figures: [String] {
    switch self {
    case .unaryLatency:
      // The lower quartiles too: a shifted distribution and a slow tail move p50 alike.
      [
        "p10_us", "p25_us", "p50_us", "p90_us", "p99_us", "max_us", "calls_per_s", "cpu_s_per_1k",
        "switches_per_call",
      ]
    case .unaryThroughput: ["calls_per_s", "cpu_s_per_1k"]
    case .pingPong: ["round_trips_per_s", "p50_us", "p99_us", "cpu_s_per_1k", "switches_per_call"]
    case .largeUnary: ["mb_per_s", "cpu_s_per_1k"]
    case .serverStreaming16B, .serverStreaming64K: ["msgs_per_s", "mb_per_s", "cpu_s_per_1k"]
    }
  }

  func value(of metric: String, in tally: Tally) -> Double {
    switch metric {
    case "p10_us": tally.percentile(10)
    case "p25_us": tally.percentile(25)
    case "p50_us": tally.p50
    case "p90_us": tally.p90
    case "p99_us": tally.p99
    case "max_us": tally.max
    case "calls_per_s", "round_trips_per_s": tally.callsPerSecond
    case "msgs_per_s": tally.messagesPerSecond
    case "mb_per_s": tally.megabytesPerSecond
    case "cpu_s_per_1k": tally.cpuPerThousand
    case "switches_per_call": tally.switchesPerUnit
    case "failures": Double(tally.failures)
    default: 0
    }
  }
}

/// How much work each scenario does; `--quick` shrinks it to a smoke test.
struct BenchSettings: Sendable {
  var rounds = 5
  var unaryLatencyCalls = 10_000
  var warmupCalls = 1_000
  var throughputSeconds = 5.0
  var concurrency = 64
  var pingPongRoundTrips = 10_000
  var largeUnaryCalls = 50
  var largeUnaryInFlight = 10
  var streamingSeconds = 10.0
  /// The most payload and messages one StreamingOutputCall asks for; a stream runs to its end,
  /// so a smoke test asks for short ones.
  var streamPayloadBytes = 32 << 20
  var streamMessages = 20_000

  static let quick = BenchSettings(
    rounds: 2,
    unaryLatencyCalls: 200,
    warmupCalls: 20,
    throughputSeconds: 0.4,
    concurrency: 8,
    pingPongRoundTrips: 200,
    largeUnaryCalls: 4,
    largeUnaryInFlight: 2,
    streamingSeconds: 0.4,
    streamPayloadBytes: 1 << 20,
    streamMessages: 500
  )
}

/// The requests the scenarios send, serialized once.
enum BenchRequests {
  static func unary(requestBytes: Int, responseBytes: Int) -> Data {
    var request = Grpc_Testing_SimpleRequest()
    request.responseSize = Int32(responseBytes)
    request.payload.body = Data(count: requestBytes)
    return try! request.serializedData()  // a message of known fields always serializes
  }

  static func ping(bytes: Int) -> Data {
    var request = Grpc_Testing_StreamingOutputCallRequest()
    var parameters = Grpc_Testing_ResponseParameters()
    parameters.size = Int32(bytes)
    request.responseParameters = [parameters]
    request.payload.body = Data(count: bytes)
    return try! request.serializedData()
  }

  /// A StreamingOutputCall asking for `count` messages of `size` bytes.
  static func stream(count: Int, size: Int) -> Data {
    var request = Grpc_Testing_StreamingOutputCallRequest()
    var parameters = Grpc_Testing_ResponseParameters()
    parameters.size = Int32(size)
    request.responseParameters = Array(repeating: parameters, count: count)
    return try! request.serializedData()
  }

  /// Messages per StreamingOutputCall of `size`-byte messages: the settings' payload, within
  /// their message count.
  static func streamCount(size: Int, settings: BenchSettings) -> Int {
    let fitting = settings.streamPayloadBytes / Swift.max(1, size)
    return Swift.max(1, Swift.min(settings.streamMessages, fitting))
  }
}
