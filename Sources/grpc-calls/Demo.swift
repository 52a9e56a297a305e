internal import ArgumentParser
internal import GRPCCalls
internal import GRPCCallsInterop

/// Starts the interop server in-process and runs the standard cases against it through the
/// generated client: its callback, async and v1 (GRPCLegacy) faces; then once more with the
/// ready-made logging, metrics and tracing interceptors installed globally.
struct Demo: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract:
      "Run the standard interop cases through the generated client against an embedded server."
  )

  func run() async throws {
    let server = try await InteropServer.start(host: "127.0.0.1", port: 0)
    Console.line("interop server listening on \(server.target)")
    let client = InteropClient(target: server.target)
    let apis: [InteropClient.API] = [.generated, .async, .legacy]
    var summary = await InteropRunner.run(InteropTestCase.allCases, with: client, apis: apis)

    Console.line("--- again, with the logging, metrics and tracing interceptors installed globally")
    let observability = DemoObservability()
    for factory in observability.factories {
      GRPCCall2.registerGlobalInterceptor(factory)
    }
    summary.add(await InteropRunner.run(InteropTestCase.allCases, with: client, apis: apis))
    GRPCCall2.removeAllGlobalInterceptors()
    await server.stopAndWait()

    let recorded = observability.summary()
    Console.line(recorded.line)
    if !recorded.isConsistent {
      Console.line(
        "FAIL: the interceptors' records disagree: every started call must finish once, leave "
          + "nothing in flight, and give one span and two log records"
      )
    }
    if summary.failed > 0 || !recorded.isConsistent {
      throw ExitCode.failure
    }
  }
}
