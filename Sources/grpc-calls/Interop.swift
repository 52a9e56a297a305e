internal import ArgumentParser
internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterceptors
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

  @Option(
    name: .customLong("exclude_test_cases"),
    help: "Comma-separated cases to leave out, for a server that cannot run them."
  )
  var excludeTestCases = ""

  @Option(
    help:
      "Which face of the library the cases use: generated (callbacks), async, raw (GRPCCall2), legacy (v1 methods, GRX writers), a comma-separated list, or all."
  )
  var api = "generated"

  @Option(name: .customLong("use_tls"), help: "Connect over TLS (true/false).")
  var useTLS = false

  @Option(
    name: .customLong("use_cache"),
    help:
      "Put a response cache (GRPCResponseCacheInterceptorFactory) in every call, so cacheable_unary runs (true/false)."
  )
  var useCache = false

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
    // This tool ships no copy of gRPC's interop test CA: the CA must come as a file.
    if self.useTestCA, self.caFile == nil {
      throw ValidationError(
        "--use_test_ca needs --ca_file: grpc-calls does not ship gRPC's test CA"
      )
    }
    if (self.clientCertFile == nil) != (self.clientKeyFile == nil) {
      throw ValidationError("--client_cert_file and --client_key_file go together")
    }
    _ = try self.selectedCases()
    _ = try self.selectedAPIs()
  }

  func run() async throws {
    var options = GRPCCallOptions()
    options.transportType = self.useTLS ? .tls : .insecure
    options.hostNameOverride = self.serverHostOverride
    options.pemRootCertificates = try self.caFile.map(Self.read)
    options.pemCertificateChain = try self.clientCertFile.map(Self.read)
    options.pemPrivateKey = try self.clientKeyFile.map(Self.read)
    options.userAgentPrefix = self.userAgentPrefix
    if self.useCache {
      options.interceptorFactories.append(GRPCResponseCacheInterceptorFactory())
    }
    let client = InteropClient(
      target: "\(self.serverHost):\(self.serverPort)",
      callOptions: options
    )
    let summary = await InteropRunner.run(
      try self.selectedCases(),
      with: client,
      apis: try self.selectedAPIs(),
      usesCache: self.useCache
    )
    if summary.failed > 0 {
      throw ExitCode.failure
    }
  }

  private func selectedAPIs() throws -> [InteropClient.API] {
    if self.api == "all" { return InteropClient.API.allCases }
    return try self.api.split(separator: ",").map { name in
      guard let api = InteropClient.API(rawValue: String(name)) else {
        throw ValidationError("unknown API '\(name)'; known: generated, async, raw, legacy, all")
      }
      return api
    }
  }

  private static func read(_ path: String) throws -> String {
    do {
      return try String(contentsOfFile: path, encoding: .utf8)
    } catch {
      throw ValidationError("cannot read \(path): \(error.localizedDescription)")
    }
  }

  private func selectedCases() throws -> [InteropCaseName] {
    let excluded = Set(try Self.cases(named: self.excludeTestCases).map(\.name))
    let selected =
      self.testCase == "all" ? InteropCaseName.all : try Self.cases(named: self.testCase)
    return selected.filter { !excluded.contains($0.name) }
  }

  private static func cases(named list: String) throws -> [InteropCaseName] {
    try list.split(separator: ",").map { name in
      guard let known = InteropCaseName(String(name)) else {
        throw ValidationError(
          "unknown test case '\(name)'; known: \(InteropCaseName.all.map(\.name).joined(separator: ", "))"
        )
      }
      return known
    }
  }
}
