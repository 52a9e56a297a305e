internal import ArgumentParser
internal import Dispatch
internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCCore
internal import SwiftProtobuf

/// `grpc-calls hold-stream`: asks a server for large streams under flow control (one, or
/// `--streams` at once on one channel), gives no demand for a while and reports how much this
/// process grew, then reads everything.
///
/// The back-pressure test runs it as a separate process so that the client's memory is
/// measured alone, while the test's own server counts how far it got:
///
/// ```
/// holding                                    after --hold seconds with no demand (then waits
///                                            for a line on standard input: the test saw its
///                                            server stop writing)
/// held rss-growth=<bytes>                    (then waits for a line on standard input)
/// done received=<n> intact=<n> error=<none or a call's error>   (counts over all streams)
/// ```
///
/// With `--cancel`, the second line cancels every call instead of reading, and the last is
/// `done received=<n> intact=<n> cancelled=<calls closed with CANCELLED>`:
///
/// ```
/// ```
struct HoldStream: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "hold-stream",
    abstract:
      "Hold a flow-controlled server stream with no demand, report memory, then read it all.",
    shouldDisplay: false
  )

  @Option(help: "The interop server, host:port.")
  var target: String

  @Option(help: "Messages the server streams, per stream.")
  var messages = 2000

  @Option(help: "Streams held at once, on one channel.")
  var streams = 1

  @Option(help: "Payload bytes per message.")
  var size = 64 * 1024

  @Option(help: "HTTP/2 window in bytes (0 = the core's default).")
  var window = 1 << 20

  @Option(help: "Seconds to hold the stream with no demand.")
  var hold = 2.0

  @Flag(help: "Cancel the calls after holding them instead of reading them.")
  var cancel = false

  func run() async throws {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.enableFlowControl = true
    options.http2TargetWindowSize = self.window
    let tally = StreamTally(size: self.size)
    let closed = AsyncStream.makeStream(of: GRPCError?.self)
    let queue = DispatchQueue(label: "hold-stream")
    let requestOptions = try GRPCRequestOptions(
      host: self.target,
      path: "/grpc.testing.TestService/StreamingOutputCall"
    )
    var parameters = Grpc_Testing_ResponseParameters()
    parameters.size = Int32(self.size)
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = Array(repeating: parameters, count: self.messages)
    let requestData = try request.serializedData()
    let calls = (0 ..< self.streams).map { _ in
      GRPCCall2(
        requestOptions: requestOptions,
        responseHandler: GRPCCallbackResponseHandler(queue: queue) { message in
          tally.check(message)
        } onClose: { _, error in
          closed.continuation.yield(error)
        },
        callOptions: options
      )
    }

    let baseline = ResourceUsage.residentBytes()
    for call in calls {
      call.start()
      call.writeData(requestData)
      call.finish()
    }
    try await Task.sleep(for: .seconds(self.hold))
    Console.line("holding")
    _ = readLine()
    Console.line("held rss-growth=\(ResourceUsage.residentBytes() - baseline)")
    _ = readLine()

    for call in calls {
      if self.cancel {
        call.cancel()
      } else {
        call.receiveNextMessages(self.messages)
      }
    }
    var errors: [GRPCError?] = []
    for await error in closed.stream {
      errors.append(error)
      if errors.count == calls.count { break }
    }
    let counts = tally.counts
    if self.cancel {
      let cancelled = errors.count { $0?.code == .cancelled }
      Console.line(
        "done received=\(counts.received) intact=\(counts.intact) cancelled=\(cancelled)"
      )
      guard cancelled == self.streams else { throw ExitCode.failure }
      return
    }
    let closeError = errors.compactMap { $0 }.first
    Console.line(
      "done received=\(counts.received) intact=\(counts.intact) error=\(closeError.map { "\($0)" } ?? "none")"
    )
    guard closeError == nil, counts.intact == self.messages * self.streams else {
      throw ExitCode.failure
    }
  }
}

/// Counts the messages of a hold-stream, and those whose payload is `size` zero bytes.
private final class StreamTally: Sendable {
  private let size: Int
  private let state = LockedValue((received: 0, intact: 0))

  init(size: Int) {
    self.size = size
  }

  var counts: (received: Int, intact: Int) { self.state.withLock { $0 } }

  func check(_ message: any Sendable) {
    let response = (message as? Data).flatMap {
      try? Grpc_Testing_StreamingOutputCallResponse(serializedBytes: $0)
    }
    let intact = response.map { $0.payload.body == Data(count: self.size) } ?? false
    self.state.withLock {
      $0.received += 1
      $0.intact += intact ? 1 : 0
    }
  }
}
