internal import Foundation
internal import GRPCCalls
internal import GRPCCallsHealth
internal import GRPCCore

/// grpc-calls' own case `health`: ``GRPCHealthClient`` against the server's standard health
/// service, flipping a service's status with ``InteropHealthService/setKey`` (which the interop
/// servers of grpcio, grpc-go and `grpc-calls serve` all honour).
///
/// Each run watches a service of its own name, so runs on several faces at once do not meet.
extension InteropClient {
  /// The statuses a watch has yielded so far, waited for one at a time.
  private final class Statuses: Sendable {
    private let stream: AsyncStream<GRPCServingStatus>
    private let continuation: AsyncStream<GRPCServingStatus>.Continuation

    init() {
      (self.stream, self.continuation) = AsyncStream.makeStream(of: GRPCServingStatus.self)
    }

    func add(_ status: GRPCServingStatus) {
      self.continuation.yield(status)
    }

    /// The next status; fails when none comes within `seconds` (a generous bound: a status
    /// that never comes must not hang the case).
    func next(_ seconds: Double = CloseWait.seconds) async throws -> GRPCServingStatus {
      try await withThrowingTaskGroup(of: GRPCServingStatus?.self) { group in
        group.addTask {
          var iterator = self.stream.makeAsyncIterator()
          return await iterator.next()
        }
        group.addTask {
          try await Task.sleep(for: .seconds(seconds))
          return nil
        }
        defer { group.cancelAll() }
        guard let status = try await group.next() ?? nil else {
          throw InteropCaseFailure("health: no new status within \(Int(seconds)) s")
        }
        return status
      }
    }
  }

  /// Sets `service`'s status on the server through a TestService call.
  private func setHealth(_ service: String, _ status: String) async throws {
    var options = self.callOptions
    options.initialMetadata.addString("\(service)=\(status)", forKey: InteropHealthService.setKey)
    _ = try await TestService(
      host: self.target,
      callOptions: options,
      channelPool: self.channelPool
    )
    .emptyCall(Grpc_Testing_Empty())
  }

  /// The case, watching through the async sequence (`callback: false`) or the callback face.
  func health(callback: Bool) async throws {
    let client = GRPCHealthClient(
      host: self.target,
      callOptions: self.callOptions,
      channelPool: self.channelPool
    )
    let service = "grpc-calls.health.\(UUID().uuidString)"
    let overall = try await client.check()
    try self.check(overall == .serving, "health: Check(\"\") is \(overall), expected SERVING")
    let unknown = try await client.check(service: service)
    try self.check(
      unknown == .serviceUnknown,
      "health: Check of an unknown service is \(unknown), expected SERVICE_UNKNOWN"
    )

    let statuses = Statuses()
    let options = GRPCHealthWatchOptions(initialBackoff: 0.1, maxBackoff: 1)
    let watch: @Sendable () -> Void
    if callback {
      let handle = client.watch(
        service: service,
        options: options,
        queue: DispatchQueue(label: "health")
      ) {
        statuses.add($0)
      }
      watch = { handle.cancel() }
    } else {
      let task = Task {
        for try await status in client.watch(service: service, options: options) {
          statuses.add(status)
        }
      }
      watch = { task.cancel() }
    }
    defer { watch() }

    try await self.expect(statuses, .serviceUnknown, "before the service is known")
    try await self.setHealth(service, "SERVING")
    try await self.expect(statuses, .serving, "after SERVING was set")
    try await self.setHealth(service, "NOT_SERVING")
    try await self.expect(statuses, .notServing, "after NOT_SERVING was set")

    let checked = try await client.check(service: service)
    try self.check(checked == .notServing, "health: Check is \(checked), expected NOT_SERVING")
    let listed: [String: GRPCServingStatus]
    do {
      listed = try await client.list()
    } catch let error as GRPCError where error.code == .unimplemented {
      // A health service older than List (grpc-go 1.33, which Debian ships): Check and Watch suffice.
      return
    }
    try self.check(
      listed[service] == .notServing && listed[""] == .serving,
      "health: List gave \(listed[service].map(String.init(describing:)) ?? "nothing") for the service and "
        + "\(listed[""].map(String.init(describing:)) ?? "nothing") for the server"
    )
  }

  /// `GRPCCall2` with serialized bytes: `Check` of the server as a whole is SERVING.
  func rawHealthCheck() async throws {
    let (call, recorder) = try self.makeCall("Check", service: "grpc.health.v1.Health")
    call.start()
    call.writeData(try Self.bytes(Grpc_Health_V1_HealthCheckRequest()))
    call.finish()
    try await self.expectClose(recorder, code: nil)
    try self.check(
      recorder.messages.count == 1,
      "health: Check gave \(recorder.messages.count) responses, expected 1"
    )
    let response = try Self.decode(Grpc_Health_V1_HealthCheckResponse.self, recorder.messages[0])
    try self.check(
      response.status == .serving,
      "health: Check(\"\") is \(response.status), expected SERVING"
    )
  }

  private func expect(
    _ statuses: Statuses,
    _ expected: GRPCServingStatus,
    _ when: String
  ) async throws {
    let status = try await statuses.next()
    try self.check(status == expected, "health: Watch gave \(status) \(when), expected \(expected)")
  }
}
