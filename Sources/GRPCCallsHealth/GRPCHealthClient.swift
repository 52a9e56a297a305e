public import Dispatch
public import GRPCCalls
internal import GRPCCore
internal import GRPCProtoCalls

/// A client of the standard health service, `grpc.health.v1.Health`, which grpcio
/// (grpcio-health-checking), grpc-go (`google.golang.org/grpc/health`), grpc-java and most
/// gRPC servers serve.
///
/// ```swift
/// let health = GRPCHealthClient(host: "127.0.0.1:50051", callOptions: options)
/// print(try await health.check())                         // SERVING: the server as a whole
/// print(try await health.check(service: "kv.Store"))      // one service
/// for await status in health.watch(service: "kv.Store") {  // each change, until cancelled
///   print(status)
/// }
/// ```
///
/// Its calls are ordinary grpc-calls calls: each method takes `GRPCCallOptions` (a timeout,
/// metadata, interceptors), and the channel is shared with the other clients of the same host
/// and channel options.
public struct GRPCHealthClient: Sendable {
  private let health: Grpc_Health_V1_Health

  /// Creates a client of the health service of `host`.
  ///
  /// - Parameters:
  ///   - host: The server: `name[:port]` or a target with a scheme, as for any service.
  ///   - callOptions: The options of calls that do not bring their own.
  ///   - channelPool: The pool to take channels from; the shared pool by default.
  public init(
    host: String,
    callOptions: GRPCCallOptions? = nil,
    channelPool: GRPCChannelPool = .shared
  ) {
    self.health = Grpc_Health_V1_Health(
      host: host,
      callOptions: callOptions,
      channelPool: channelPool
    )
  }

  /// The health of `service`, or of the server as a whole for `""` (the default).
  ///
  /// A service the server does not know (`NOT_FOUND`) is ``GRPCServingStatus/serviceUnknown``.
  ///
  /// - Throws: `GRPCError`: `UNIMPLEMENTED` when the server serves no health service, or the
  ///   call's own failure (`UNAVAILABLE`, `DEADLINE_EXCEEDED`…).
  public func check(
    service: String = "",
    callOptions: GRPCCallOptions? = nil
  ) async throws -> GRPCServingStatus {
    var request = Grpc_Health_V1_HealthCheckRequest()
    request.service = service
    do {
      return GRPCServingStatus(
        try await self.health.check(request, callOptions: callOptions).status
      )
    } catch let error as GRPCError where error.code == .notFound {
      return .serviceUnknown
    } catch let error as GRPCError where error.code == .unimplemented {
      throw Self.noHealthService(error, method: "Check")
    }
  }

  /// The health of every service the server knows, by name (the server as a whole is `""`).
  ///
  /// - Throws: `GRPCError`: `UNIMPLEMENTED` when the server's health service predates `List`
  ///   (use ``check(service:callOptions:)``), `RESOURCE_EXHAUSTED` when it knows more than 100
  ///   services, or the call's own failure.
  public func list(callOptions: GRPCCallOptions? = nil) async throws -> [String: GRPCServingStatus]
  {
    do {
      let response = try await self.health.list(
        Grpc_Health_V1_HealthListRequest(),
        callOptions: callOptions
      )
      return response.statuses.mapValues { GRPCServingStatus($0.status) }
    } catch let error as GRPCError where error.code == .unimplemented {
      throw Self.noHealthService(error, method: "List")
    }
  }

  /// The health of `service` (or of the server, for `""`), now and at each change, until the
  /// iteration ends or its task is cancelled.
  ///
  /// - The first element is the status when the watch starts; then each status that differs
  ///   from the one before.
  /// - When the stream ends or fails, the watch starts again after a backoff
  ///   (``GRPCHealthWatchOptions``), as the health protocol asks; meanwhile the status is
  ///   ``GRPCServingStatus/unknown``, which the sequence yields once.
  /// - A server that answers `Watch` with `UNIMPLEMENTED` is asked with `Check` every
  ///   ``GRPCHealthWatchOptions/pollInterval`` instead.
  /// - The `Watch` calls run without a deadline (`callOptions`' timeout applies to `Check`
  ///   only): a watch is meant to last.
  ///
  /// The sequence throws only when the server has no health service at all (`Check` too is
  /// `UNIMPLEMENTED`): a `GRPCError` saying so.
  public func watch(
    service: String = "",
    options: GRPCHealthWatchOptions = GRPCHealthWatchOptions(),
    callOptions: GRPCCallOptions? = nil
  ) -> AsyncThrowingStream<GRPCServingStatus, any Error> {
    let watcher = HealthWatcher(
      client: self,
      service: service,
      options: options,
      callOptions: callOptions
    )
    return AsyncThrowingStream { continuation in
      let task = Task { await watcher.run(continuation) }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  /// The callback face of ``watch(service:options:callOptions:)``: `onStatus` runs on `queue`
  /// with each status, until the returned watch is cancelled; `onFailure`, at most once, if
  /// the server has no health service (the watch then ends).
  public func watch(
    service: String = "",
    options: GRPCHealthWatchOptions = GRPCHealthWatchOptions(),
    callOptions: GRPCCallOptions? = nil,
    queue: DispatchQueue,
    onStatus: @escaping @Sendable (GRPCServingStatus) -> Void,
    onFailure: @escaping @Sendable (GRPCError) -> Void = { _ in }
  ) -> GRPCHealthWatch {
    let statuses = self.watch(service: service, options: options, callOptions: callOptions)
    let cancelled = LockedValue(false)
    // Checked on the queue: nothing reaches a handler once cancel() has returned.
    let deliver: @Sendable (@escaping @Sendable () -> Void) -> Void = { handler in
      queue.async {
        guard !cancelled.withLock({ $0 }) else { return }
        handler()
      }
    }
    let task = Task {
      do {
        for try await status in statuses {
          deliver { onStatus(status) }
        }
      } catch let error as GRPCError {
        deliver { onFailure(error) }
      } catch {
        // The watch's task was cancelled: nothing to report.
      }
    }
    return GRPCHealthWatch(task: task, cancelled: cancelled)
  }

  /// One `Watch` call, with no deadline: `onStatus` with each status, until the server ends
  /// the stream.
  func watchOnce(
    service: String,
    callOptions: GRPCCallOptions?,
    onStatus: (GRPCServingStatus) -> Void
  ) async throws {
    var request = Grpc_Health_V1_HealthCheckRequest()
    request.service = service
    var options = callOptions ?? self.health.callOptions
    options.timeout = 0
    try await self.health.watch(request, callOptions: options) { responses in
      for try await response in responses {
        onStatus(GRPCServingStatus(response.status))
      }
    }
  }

  private static func noHealthService(_ error: GRPCError, method: String) -> GRPCError {
    var explained = error
    explained.message =
      "The server does not serve grpc.health.v1.Health/\(method) (UNIMPLEMENTED: \(error.message)); "
      + "a grpcio server adds it with grpcio-health-checking, a grpc-go server with google.golang.org/grpc/health"
    return explained
  }
}

/// A watch started by ``GRPCHealthClient/watch(service:options:callOptions:queue:onStatus:onFailure:)``.
/// Keep it while you watch: released, it cancels the watch.
public final class GRPCHealthWatch: Sendable {
  private let task: Task<Void, Never>
  private let cancelled: LockedValue<Bool>

  init(task: Task<Void, Never>, cancelled: LockedValue<Bool>) {
    self.task = task
    self.cancelled = cancelled
  }

  /// Ends the watch and its call. Once it returns, the handler is not called again.
  public func cancel() {
    self.cancelled.withLock { $0 = true }
    self.task.cancel()
  }

  deinit {
    self.task.cancel()
  }
}
