internal import ArgumentParser
internal import Foundation
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
    help:
      "Take gzip and deflate; the server then compresses every response to a client that accepts them."
  )
  var compression = true

  @Option(
    help: "The most streams a client may open at once on one connection; no limit by default."
  )
  var maxConcurrentStreams: Int?

  @Option(name: .customLong("use_tls"), help: "Serve over TLS (true/false), with --cert and --key.")
  var useTLS = false

  @Option(help: "With --use_tls: the server's certificate chain, a PEM file.")
  var cert: String?

  @Option(help: "With --use_tls: the certificate's private key, a PEM file.")
  var key: String?

  @Option(
    name: .customLong("count-unary"),
    help: "Print 'unary calls: K' after every N unary calls answered (balancing tests)."
  )
  var countUnary: Int?

  func validate() throws {
    if self.useTLS, self.cert == nil || self.key == nil {
      throw ValidationError("--use_tls needs --cert and --key (PEM files)")
    }
    if !self.useTLS, self.cert != nil || self.key != nil {
      throw ValidationError("--cert and --key take effect with --use_tls")
    }
  }

  func run() async throws {
    var tls: InteropServer.TLSIdentity?
    if self.useTLS, let cert = self.cert, let key = self.key {
      tls = InteropServer.TLSIdentity(
        certificateChainPEM: try Self.read(cert, what: "certificate"),
        privateKeyPEM: try Self.read(key, what: "key")
      )
    }
    let server = try await InteropServer.start(
      host: self.host,
      port: self.port,
      tls: tls,
      compression: self.compression,
      maxConcurrentStreams: self.maxConcurrentStreams
    )
    Console.line("listening on \(server.target)")
    guard let every = self.countUnary, every > 0 else {
      try await server.waitUntilStopped()
      return
    }
    try await withThrowingDiscardingTaskGroup { group in
      group.addTask { try await server.waitUntilStopped() }
      group.addTask { try await Self.reportUnaryCalls(of: server, every: every) }
    }
  }

  /// Prints "unary calls: K" for each multiple K of `every` the server's unary calls reach.
  private static func reportUnaryCalls(of server: InteropServer, every: Int) async throws {
    var reported = 0
    while true {
      try await Task.sleep(for: .milliseconds(20))
      let served = server.recorder.rpcs.count { $0.method.hasSuffix("/UnaryCall") }
      while reported + every <= served {
        reported += every
        Console.line("unary calls: \(reported)")
      }
    }
  }

  private static func read(_ path: String, what: String) throws -> String {
    do {
      return try String(contentsOfFile: path, encoding: .utf8)
    } catch {
      throw ValidationError("cannot read the \(what) file \(path): \(error.localizedDescription)")
    }
  }
}
