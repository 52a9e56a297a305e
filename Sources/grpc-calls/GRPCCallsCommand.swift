internal import ArgumentParser

@main
struct GRPCCallsCommand: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "grpc-calls",
    abstract: "The grpc-calls command-line tool: demo, interop server.",
    subcommands: [Demo.self, Serve.self]
  )
}
