internal import ArgumentParser
internal import Dispatch
internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCCore
internal import SwiftProtobuf
internal import Synchronization

/// `grpc-calls hold-stream`: asks a server for a large stream under flow control, gives no
/// demand for a while and reports how much this process grew, then reads everything.
///
/// The back-pressure test runs it as a separate process so that the client's memory is
/// measured alone, while the test's own server counts how far it got:
///
/// ```
/// held rss-growth=<bytes>                    after --hold seconds with no demand
///                                            (then waits for a line on standard input)
/// done received=<n> intact=<n> error=<none or the call's error>
/// ```
struct HoldStream: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "hold-stream",
    abstract: "Hold a flow-controlled server stream with no demand, report memory, then read it all.",
    shouldDisplay: false
  )

  @Option(help: "The interop server, host:port.")
  var target: String

  @Option(help: "Messages the server streams.")
  var messages = 2000

  @Option(help: "Payload bytes per message.")
  var size = 64 * 1024

  @Option(help: "HTTP/2 window in bytes (0 = the core's default).")
  var window = 1 << 20

  @Option(help: "Seconds to hold the stream with no demand.")
  var hold = 2.0

  func run() async throws {
    var options = GRPCCallOptions()
    options.transportType = .insecure
    options.enableFlowControl = true
    options.http2TargetWindowSize = self.window
    let tally = StreamTally(size: self.size)
    let closed = AsyncStream.makeStream(of: GRPCError?.self)
    let handler = GRPCCallbackResponseHandler(queue: DispatchQueue(label: "hold-stream")) { message in
      tally.check(message)
    } onClose: { _, error in
      closed.continuation.yield(error)
      closed.continuation.finish()
    }
    let call = GRPCCall2(
      requestOptions: try GRPCRequestOptions(
        host: self.target,
        path: "/grpc.testing.TestService/StreamingOutputCall"
      ),
      responseHandler: handler,
      callOptions: options
    )
    var parameters = Grpc_Testing_ResponseParameters()
    parameters.size = Int32(self.size)
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = Array(repeating: parameters, count: self.messages)

    let baseline = ResourceUsage.residentBytes()
    call.start()
    call.writeData(try request.serializedData())
    call.finish()
    try await Task.sleep(for: .seconds(self.hold))
    Console.line("held rss-growth=\(ResourceUsage.residentBytes() - baseline)")
    _ = readLine()

    call.receiveNextMessages(self.messages)
    var closeError: GRPCError?
    for await error in closed.stream {
      closeError = error
    }
    let counts = tally.counts
    Console.line(
      "done received=\(counts.received) intact=\(counts.intact) error=\(closeError.map { "\($0)" } ?? "none")"
    )
    guard closeError == nil, counts.intact == self.messages else { throw ExitCode.failure }
  }
}

/// Counts the messages of a hold-stream, and those whose payload is `size` zero bytes.
private final class StreamTally: Sendable {
  private let size: Int
  private let state = Mutex((received: 0, intact: 0))

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
