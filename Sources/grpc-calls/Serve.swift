internal import ArgumentParser
internal import GRPCCallsInterop

/// Runs the interop TestService until interrupted.
struct Serve: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Run the interop TestService server until interrupted."
  )

  @Option(help: "The address to listen on.")
  var host = "127.0.0.1"

  @Option(help: "The port to listen on; 0 picks a free one.")
  var port = 0

  @Flag(
    inversion: .prefixedNo,
    help: "Take gzip and deflate; the server then compresses every response to a client that accepts them."
  )
  var compression = true

  @Option(help: "The most streams a client may open at once on one connection; no limit by default.")
  var maxConcurrentStreams: Int?

  func run() async throws {
    let server = try await InteropServer.start(
      host: self.host,
      port: self.port,
      compression: self.compression,
      maxConcurrentStreams: self.maxConcurrentStreams
    )
    Console.line("listening on \(server.target)")
    try await server.waitUntilStopped()
  }
}
