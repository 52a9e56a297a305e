internal import ArgumentParser

@main
struct GRPCCallsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "grpc-calls",
    abstract:
      "The grpc-calls command-line tool: demo, interop client and server, bench, load, faults; list and describe through server reflection.",
    subcommands: [
      Demo.self, Interop.self, Serve.self, Bench.self, Load.self, Cancellation.self, Faults.self,
      HoldStream.self,
      ListServices.self, Describe.self,
    ]
  )
}
