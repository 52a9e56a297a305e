internal import ArgumentParser
internal import GRPCCalls
internal import GRPCCallsInterop

/// The standard interop client: flag and case names as in gRPC's interop test descriptions.
struct Interop: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Run the standard gRPC interop client cases against a server, through GRPCCall2."
  )

  @Option(name: .customLong("server_host"), help: "The server's host name or address.")
  var serverHost = "127.0.0.1"

  @Option(name: .customLong("server_port"), help: "The server's port.")
  var serverPort: Int

  @Option(
    name: .customLong("test_case"),
    help: "A case name (e.g. large_unary), a comma-separated list, or 'all'."
  )
  var testCase = "all"

  @Option(name: .customLong("use_tls"), help: "Connect over TLS (true/false).")
  var useTLS = false

  @Option(name: .customLong("use_test_ca"), help: "Trust the interop test CA (true/false).")
  var useTestCA = false

  @Option(
    name: .customLong("server_host_override"),
    help: "The name the server's certificate is verified against."
  )
  var serverHostOverride: String?

  @Option(name: .customLong("ca_file"), help: "A PEM file of roots to trust.")
  var caFile: String?

  @Option(name: .customLong("client_cert_file"), help: "A PEM client certificate chain (mTLS).")
  var clientCertFile: String?

  @Option(name: .customLong("client_key_file"), help: "A PEM client private key (mTLS).")
  var clientKeyFile: String?

  @Option(name: .customLong("user_agent_prefix"), help: "Put in front of the user agent.")
  var userAgentPrefix: String?

  func validate() throws {
    // Custom roots and client certificates arrive with the channel-options issue; refuse them
    // rather than connect with settings other than those asked for.
    let unsupported: [(String, Bool)] = [
      ("--use_test_ca", self.useTestCA),
      ("--server_host_override", self.serverHostOverride != nil),
      ("--ca_file", self.caFile != nil),
      ("--client_cert_file", self.clientCertFile != nil),
      ("--client_key_file", self.clientKeyFile != nil),
    ]
    let refused = unsupported.filter(\.1).map(\.0)
    if !refused.isEmpty {
      throw ValidationError(
        "\(refused.joined(separator: ", ")): not supported yet (custom trust roots, "
          + "host name override and client certificates are not in GRPCCallOptions yet)"
      )
    }
    _ = try self.selectedCases()
  }

  func run() async throws {
    var options = GRPCCallOptions()
    options.transportType = self.useTLS ? .tls : .insecure
    options.userAgentPrefix = self.userAgentPrefix
    let client = InteropClient(target: "\(self.serverHost):\(self.serverPort)", callOptions: options)
    let summary = await InteropRunner.run(try self.selectedCases(), with: client)
    if summary.failed > 0 {
      throw ExitCode.failure
    }
  }

  private func selectedCases() throws -> [InteropCaseName] {
    if self.testCase == "all" {
      return InteropCaseName.all
    }
    return try self.testCase.split(separator: ",").map { name in
      guard let known = InteropCaseName(String(name)) else {
        throw ValidationError(
          "unknown test case '\(name)'; known: \(InteropCaseName.all.map(\.name).joined(separator: ", "))"
        )
      }
      return known
    }
  }
}
