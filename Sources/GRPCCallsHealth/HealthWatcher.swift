internal import Foundation
internal import GRPCCalls
internal import GRPCCore

/// The loop behind ``GRPCHealthClient/watch(service:options:callOptions:)``: `Watch` again
/// after a backoff whenever the stream ends (the health protocol's rule for every status but
/// `UNIMPLEMENTED`), or poll `Check` where `Watch` is not implemented.
struct HealthWatcher: Sendable {
  let client: GRPCHealthClient
  let service: String
  let options: GRPCHealthWatchOptions
  let callOptions: GRPCCallOptions?

  /// Yields each status that differs from the one before.
  private final class Changes {
    let continuation: AsyncThrowingStream<GRPCServingStatus, any Error>.Continuation
    var last: GRPCServingStatus?

    init(_ continuation: AsyncThrowingStream<GRPCServingStatus, any Error>.Continuation) {
      self.continuation = continuation
    }

    func yield(_ status: GRPCServingStatus) {
      guard status != self.last else { return }
      self.last = status
      self.continuation.yield(status)
    }
  }

  func run(_ continuation: AsyncThrowingStream<GRPCServingStatus, any Error>.Continuation) async {
    let changes = Changes(continuation)
    do {
      try await self.watch(changes)
      continuation.finish()
    } catch {
      continuation.finish(throwing: error)
    }
  }

  private func watch(_ changes: Changes) async throws {
    var backoff = Backoff(
      initial: Self.sane(self.options.initialBackoff),
      max: Self.sane(self.options.maxBackoff)
    )
    while !Task.isCancelled {
      do {
        try await self.client.watchOnce(service: self.service, callOptions: self.callOptions) {
          status in
          backoff.reset()
          changes.yield(status)
        }
      } catch let error as GRPCError where error.code == .unimplemented {
        try await self.poll(changes)
        return
      } catch {
        // Any other end, OK included: watch again after the backoff.
      }
      guard !Task.isCancelled else { return }
      changes.yield(.unknown)
      try? await Task.sleep(for: .seconds(backoff.next()))
    }
  }

  /// `Check` every poll interval, for a server without `Watch`.
  ///
  /// - Throws: The `UNIMPLEMENTED` `GRPCError` of a server without `Check` either: it has no
  ///   health service to watch.
  private func poll(_ changes: Changes) async throws {
    while !Task.isCancelled {
      do {
        changes.yield(
          try await self.client.check(service: self.service, callOptions: self.callOptions)
        )
      } catch let error as GRPCError where error.code == .unimplemented {
        throw error
      } catch {
        changes.yield(.unknown)
      }
      try? await Task.sleep(for: .seconds(Self.sane(self.options.pollInterval)))
    }
  }

  /// `seconds`, from 10 ms to a day; a value that is not a finite number is taken as 1 s.
  private static func sane(_ seconds: TimeInterval) -> TimeInterval {
    seconds.isFinite ? Swift.min(Swift.max(seconds, 0.01), 86_400) : 1
  }
}

/// gRPC's connection backoff: each wait 1.6 times the one before, ±20 % jitter, capped.
struct Backoff {
  private let initial: TimeInterval
  private let max: TimeInterval
  private var current: TimeInterval

  init(initial: TimeInterval, max: TimeInterval) {
    self.initial = Swift.max(initial, 0)
    self.max = Swift.max(max, self.initial)
    self.current = self.initial
  }

  mutating func reset() {
    self.current = self.initial
  }

  /// The next wait, in seconds.
  mutating func next() -> TimeInterval {
    let wait = self.current * Double.random(in: 0.8 ... 1.2)
    self.current = Swift.min(self.current * 1.6, self.max)
    return wait
  }
}
