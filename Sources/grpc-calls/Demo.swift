internal import ArgumentParser
internal import GRPCCalls
internal import GRPCCallsInterop

/// Starts the interop server in-process and runs the standard cases against it through the
/// generated client: its callback, async and v1 (GRPCLegacy) faces.
struct Demo: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Run the standard interop cases through the generated client against an embedded server."
  )

  func run() async throws {
    let server = try await InteropServer.start(host: "127.0.0.1", port: 0)
    Console.line("interop server listening on \(server.target)")
    let client = InteropClient(target: server.target)
    let summary = await InteropRunner.run(InteropTestCase.allCases, with: client, apis: [.generated, .async, .legacy])
    await server.stopAndWait()
    if summary.failed > 0 {
      throw ExitCode.failure
    }
  }
}
