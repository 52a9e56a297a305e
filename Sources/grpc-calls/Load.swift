internal import ArgumentParser
internal import Dispatch
internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCCore
internal import GRPCProtoCalls
internal import SwiftProtobuf
internal import Synchronization

/// `grpc-calls load`: many unary calls against a server, one at a time and many in flight,
/// through each face of the library; every call must succeed.
///
/// A behaviour that works once and fails at call 600 is broken: this is the check that calls
/// keep working under ordinary load against an independent peer (grpcio's C core resets a
/// half-open stream once it answered, which a client must survive).
struct Load: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Make many unary calls through each face of the library; report every failure.",
    discussion: """
      SIGINT or SIGTERM stops it early: no more calls start, those in flight finish and the \
      summary prints. A second signal ends it at once.
      """
  )

  @Option(
    help:
      "The server: any target the library takes (127.0.0.1:50051, dns:host:port, ipv4:addr:port, unix:path). Instead of --server_host and --server_port."
  )
  var target: String?

  @Option(name: .customLong("server_host"), help: "The server's host name or address.")
  var serverHost = "127.0.0.1"

  @Option(name: .customLong("server_port"), help: "The server's port.")
  var serverPort: Int?

  @Option(name: .customLong("use_tls"), help: "Connect over TLS (true/false).")
  var useTLS = false

  @Option(name: .customLong("ca_file"), help: "A PEM file of roots to trust (TLS).")
  var caFile: String?

  @Option(
    name: .customLong("server_host_override"),
    help: "The name the server's certificate is verified against (TLS)."
  )
  var serverHostOverride: String?

  @Option(help: "Calls per face and concurrency.")
  var calls = 20_000

  @Option(help: "Calls in flight: a comma-separated list (e.g. 1,32).")
  var concurrency = "1,32"

  @Option(
    help:
      "Faces: raw (GRPCCall2), callback (generated callbacks), async (generated async), a comma-separated list, or all."
  )
  var api = "all"

  @Option(
    name: .customLong("service-config"),
    help:
      "A service config in gRPC's JSON form, or @FILE to read it from a file (method timeouts, retry and hedging policies, loadBalancingConfig)."
  )
  var serviceConfig: String?

  @Option(
    name: .customLong("connections-per-target"),
    help: "HTTP/2 connections the channel may open (1 to 64); each call goes to the least busy."
  )
  var connectionsPerTarget = 1

  @Option(
    name: .customLong("name-resolution-interval"),
    help: "Seconds between resolutions of the target (30 by default, at least 1)."
  )
  var nameResolutionInterval: Double?

  @Option(
    name: .customLong("connect-max-backoff"),
    help: "The longest wait, in seconds, between attempts to reconnect to a server that is down."
  )
  var connectMaxBackoff: Double?

  enum Face: String, CaseIterable {
    case raw
    case callback
    case async
  }

  /// The service config `argument` gives: JSON, or `@` and a file holding it.
  static func serviceConfig(_ argument: String) throws -> ServiceConfig {
    var json = argument
    if argument.hasPrefix("@") {
      let path = String(argument.dropFirst())
      do {
        json = try String(contentsOfFile: path, encoding: .utf8)
      } catch {
        throw ValidationError("cannot read \(path): \(error.localizedDescription)")
      }
    }
    do {
      return try GRPCServiceConfig.parse(json)
    } catch {
      throw ValidationError("--service-config: \(error.message)")
    }
  }

  func validate() throws {
    if self.target == nil, self.serverPort == nil {
      throw ValidationError(
        "give the server as --target TARGET, or as --server_host and --server_port"
      )
    }
  }

  func run() async throws {
    var options = GRPCCallOptions()
    options.transportType = self.useTLS ? .tls : .insecure
    // A safety net only: the scripts that run `load` have limits of their own, and a busy
    // machine can stall a server for tens of seconds.
    options.timeout = 300
    options.hostNameOverride = self.serverHostOverride
    if let caFile = self.caFile {
      do {
        options.pemRootCertificates = try String(contentsOfFile: caFile, encoding: .utf8)
      } catch {
        throw ValidationError("cannot read \(caFile): \(error.localizedDescription)")
      }
    }
    if let serviceConfig = self.serviceConfig {
      options.serviceConfig = try Self.serviceConfig(serviceConfig)
    }
    guard (1 ... GRPCCallOptions.maxConnectionsPerTarget).contains(self.connectionsPerTarget) else {
      throw ValidationError("--connections-per-target must be 1 to 64")
    }
    options.connectionsPerTarget = self.connectionsPerTarget
    if let interval = self.nameResolutionInterval {
      options.nameResolutionInterval = interval
    }
    if let backoff = self.connectMaxBackoff {
      options.connectMaxBackoff = backoff
    }
    let faces =
      self.api == "all"
      ? Face.allCases
      : try self.api.split(separator: ",").map { name in
        guard let face = Face(rawValue: String(name)) else {
          throw ValidationError("unknown face '\(name)': use raw, callback, async or all")
        }
        return face
      }
    let levels = try self.concurrency.split(separator: ",").map { text in
      guard let level = Int(text), level > 0 else {
        throw ValidationError("--concurrency takes positive whole numbers, not '\(text)'")
      }
      return level
    }
    let target = self.target ?? "\(self.serverHost):\(self.serverPort ?? 0)"
    let (succeeded, failed) = await StopRequest.whileRunning { stop in
      await self.run(target: target, options: options, faces: faces, levels: levels, stop: stop)
    }
    Console.line("load: \(succeeded) ok, \(failed) failed")
    if failed > 0 {
      throw ExitCode.failure
    }
  }

  /// Runs every face at every level until done or until `stop` is requested; returns the calls
  /// that succeeded and failed.
  private func run(
    target: String,
    options: GRPCCallOptions,
    faces: [Face],
    levels: [Int],
    stop: StopRequest
  ) async -> (succeeded: Int, failed: Int) {
    var succeeded = 0
    var failed = 0
    runs: for face in faces {
      for level in levels {
        if stop.signalNumber != nil {
          break runs
        }
        let calls = LoadCalls(target: target, face: face, options: options)
        let started = ContinuousClock.now
        let result = await calls.run(count: self.calls, inFlight: level, stop: stop)
        calls.close()
        let seconds = (ContinuousClock.now - started) / .seconds(1)
        let failures = result.failures.sorted { $0.value > $1.value }
          .map { "\($0.value)× \($0.key)" }.joined(separator: "; ")
        Console.line(
          "load \(face.rawValue) in-flight \(level): \(result.succeeded) ok, \(result.failed) failed"
            + " (\(String(format: "%.1f", seconds)) s)" + (failures.isEmpty ? "" : ": \(failures)")
        )
        succeeded += result.succeeded
        failed += result.failed
      }
    }
    if let signal = stop.signalNumber {
      Console.line("load stopped by signal \(signal): the calls in flight ended, no more started")
    }
    return (succeeded, failed)
  }
}

/// Unary calls through one face on a pool of their own.
struct LoadCalls: Sendable {
  let face: Load.Face
  let pool = GRPCChannelPool()
  let options: GRPCCallOptions
  let service: TestService
  let target: String
  private let queue = DispatchQueue(label: "grpc-calls.load", attributes: .concurrent)
  private let request: Data

  struct Result: Sendable {
    var succeeded = 0
    var failed = 0
    var failures: [String: Int] = [:]

    mutating func record(_ error: GRPCError?) {
      if let error {
        self.failed += 1
        self.failures["\(error.code): \(error.message)", default: 0] += 1
      } else {
        self.succeeded += 1
      }
    }
  }

  init(target: String, face: Load.Face, options: GRPCCallOptions) {
    self.target = target
    self.face = face
    self.options = options
    self.service = TestService(host: target, callOptions: options, channelPool: self.pool)
    var request = Grpc_Testing_SimpleRequest()
    request.responseSize = 10
    request.payload.body = Data(count: 10)
    self.request = (try? request.serializedData()) ?? Data()
  }

  func close() {
    self.pool.disconnectAll()
  }

  /// Makes `count` calls with `inFlight` of them running at any time; once `stop` is requested
  /// it starts no more and waits for those in flight.
  func run(count: Int, inFlight: Int, stop: StopRequest) async -> Result {
    await withTaskGroup(of: GRPCError?.self) { group in
      var result = Result()
      var started = 0
      while started < min(inFlight, count) {
        group.addTask { await self.call() }
        started += 1
      }
      while let outcome = await group.next() {
        result.record(outcome)
        if started < count, stop.signalNumber == nil {
          group.addTask { await self.call() }
          started += 1
        }
      }
      return result
    }
  }

  /// One unary call; `nil` when it succeeded.
  private func call() async -> GRPCError? {
    switch self.face {
    case .raw:
      return await withCheckedContinuation { continuation in
        let handler = GRPCCallbackResponseHandler(queue: self.queue) { _, error in
          continuation.resume(returning: error)
        }
        guard
          let request = try? GRPCRequestOptions(
            host: self.target,
            path: "/grpc.testing.TestService/UnaryCall"
          )
        else {
          continuation.resume(
            returning: GRPCError(code: .invalidArgument, message: "bad target \(self.target)")
          )
          return
        }
        let call = GRPCCall2(
          requestOptions: request,
          responseHandler: handler,
          callOptions: self.options,
          channelPool: self.pool
        )
        call.start()
        call.writeData(self.request)
        call.finish()
      }
    case .callback:
      return await withCheckedContinuation { continuation in
        let handler = GRPCUnaryResponseHandler<Grpc_Testing_SimpleResponse>(queue: self.queue) {
          _,
          error in
          continuation.resume(returning: error)
        }
        var message = Grpc_Testing_SimpleRequest()
        message.responseSize = 10
        self.service.unaryCall(message: message, responseHandler: handler).start()
      }
    case .async:
      var message = Grpc_Testing_SimpleRequest()
      message.responseSize = 10
      do {
        _ = try await self.service.unaryCall(message)
        return nil
      } catch let error as GRPCError {
        return error
      } catch {
        return GRPCError(code: .unknown, message: "\(error)")
      }
    }
  }
}
