internal import Foundation
internal import GRPCCalls
public import GRPCCore
internal import GRPCProtobuf
internal import SwiftProtobuf

/// The interop server's `grpc.health.v1.Health`, answering as grpcio-health-checking's servicer
/// does: `Check` a known service's status or `NOT_FOUND`, `List` every status, `Watch` the
/// current status and then each change (`SERVICE_UNKNOWN` for an unknown service, without
/// ending the stream).
///
/// The server starts with `""` (the server as a whole) and `grpc.testing.TestService` serving.
/// A TestService call with ``InteropHealthService/setKey`` in its metadata changes a status
/// before it is answered, so a test can flip statuses on every interop server alike.
public final class InteropHealthService: RegistrableRPCService {
  /// Request metadata `<service>=<STATUS>` (`SERVING`, `NOT_SERVING`, `UNKNOWN`), on any
  /// TestService call: the server sets that status before it answers.
  public static let setKey = "x-grpc-calls-set-health"
  /// Request metadata on a `Watch` call: the server answers it `UNIMPLEMENTED`, as a server
  /// whose health service predates `Watch` does.
  public static let noWatchKey = "x-grpc-calls-health-no-watch"
  /// Request metadata on any health call: the server answers it `UNIMPLEMENTED`, as a server
  /// without a health service does.
  public static let noHealthKey = "x-grpc-calls-no-health"

  private typealias Status = Grpc_Health_V1_HealthCheckResponse.ServingStatus

  private struct Watcher {
    var service: String
    var continuation: AsyncStream<Status>.Continuation
  }

  private struct State {
    var statuses: [String: Status] = ["": .serving, "grpc.testing.TestService": .serving]
    var watchers: [UUID: Watcher] = [:]
    var closed = false
  }

  private let state = LockedValue(State())

  init() {}

  /// The `Watch` calls under way.
  public var activeWatches: Int {
    self.state.withLock { $0.watchers.count }
  }

  /// Applies ``setKey`` if `metadata` holds it.
  func apply(_ metadata: Metadata) throws {
    for value in metadata[stringValues: Self.setKey] {
      let parts = value.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      guard parts.count == 2, let status = Self.status(named: String(parts[1])) else {
        throw RPCError(
          code: .invalidArgument,
          message: "\(Self.setKey) must be <service>=SERVING|NOT_SERVING|UNKNOWN, not '\(value)'"
        )
      }
      self.set(String(parts[0]), status)
    }
  }

  /// Ends every `Watch` stream (with OK): a server shutting down gracefully waits for its RPCs.
  func close() {
    let watchers = self.state.withLock { state in
      state.closed = true
      defer { state.watchers = [:] }
      return Array(state.watchers.values)
    }
    for watcher in watchers { watcher.continuation.finish() }
  }

  private static func status(named name: String) -> Status? {
    switch name {
    case "SERVING": .serving
    case "NOT_SERVING": .notServing
    case "UNKNOWN": .unknown
    default: nil
    }
  }

  private func set(_ service: String, _ status: Status) {
    // Yielded under the lock (a yield only buffers), so that two changes reach every watch in
    // the order they were made.
    self.state.withLock { state in
      state.statuses[service] = status
      for watcher in state.watchers.values where watcher.service == service {
        watcher.continuation.yield(status)
      }
    }
  }

  /// A stream of `service`'s statuses, starting with the current one; `nil` once closed.
  private func watch(_ service: String) -> (UUID, AsyncStream<Status>)? {
    let (stream, continuation) = AsyncStream.makeStream(of: Status.self)
    let id = UUID()
    let started = self.state.withLock { state -> Bool in
      guard !state.closed else { return false }
      state.watchers[id] = Watcher(service: service, continuation: continuation)
      continuation.yield(state.statuses[service] ?? .serviceUnknown)
      return true
    }
    return started ? (id, stream) : nil
  }

  /// Ends watch `id`'s stream.
  private func unwatch(_ id: UUID) {
    self.state.withLock { $0.watchers.removeValue(forKey: id) }?.continuation.finish()
  }

  public func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
    router.registerHandler(
      forMethod: Self.method("Check"),
      deserializer: ProtobufDeserializer<Grpc_Health_V1_HealthCheckRequest>(),
      serializer: ProtobufSerializer<Grpc_Health_V1_HealthCheckResponse>()
    ) { request, _ in
      try Self.refuse(request.metadata, Self.noHealthKey)
      let service = try await InteropTestService.single(request.messages).service
      guard let status = self.state.withLock({ $0.statuses[service] }) else {
        throw RPCError(code: .notFound, message: "unknown service '\(service)'")
      }
      return StreamingServerResponse(single: ServerResponse(message: .with { $0.status = status }))
    }
    router.registerHandler(
      forMethod: Self.method("List"),
      deserializer: ProtobufDeserializer<Grpc_Health_V1_HealthListRequest>(),
      serializer: ProtobufSerializer<Grpc_Health_V1_HealthListResponse>()
    ) { request, _ in
      try Self.refuse(request.metadata, Self.noHealthKey)
      _ = try await InteropTestService.single(request.messages)
      let statuses = self.state.withLock { $0.statuses }
      let response = Grpc_Health_V1_HealthListResponse.with {
        $0.statuses = statuses.mapValues { status in .with { $0.status = status } }
      }
      return StreamingServerResponse(single: ServerResponse(message: response))
    }
    router.registerHandler(
      forMethod: Self.method("Watch"),
      deserializer: ProtobufDeserializer<Grpc_Health_V1_HealthCheckRequest>(),
      serializer: ProtobufSerializer<Grpc_Health_V1_HealthCheckResponse>()
    ) { request, _ in
      try Self.refuse(request.metadata, Self.noHealthKey, Self.noWatchKey)
      let service = try await InteropTestService.single(request.messages).service
      guard let (id, statuses) = self.watch(service) else {
        throw RPCError(code: .unavailable, message: "The server is shutting down")
      }
      return StreamingServerResponse { writer in
        defer { self.unwatch(id) }
        // The stream waits for changes without writing, so it learns of a client's cancel
        // (or the server's shutdown) here rather than from a failed write.
        try await withRPCCancellationHandler {
          for await status in statuses {
            try await writer.write(.with { $0.status = status })
          }
        } onCancelRPC: {
          self.unwatch(id)
        }
        return [:]
      }
    }
  }

  /// Throws `UNIMPLEMENTED` for a call that ``noHealthKey`` (or, for `Watch`, ``noWatchKey``)
  /// asks to find no such method.
  private static func refuse(_ metadata: Metadata, _ keys: String...) throws {
    for key in keys where metadata[key].contains(where: { _ in true }) {
      throw RPCError(code: .unimplemented, message: "Not implemented here (\(key))")
    }
  }

  private static func method(_ name: String) -> MethodDescriptor {
    MethodDescriptor(fullyQualifiedService: "grpc.health.v1.Health", method: name)
  }
}
