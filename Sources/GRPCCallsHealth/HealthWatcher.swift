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
    let continuation: AsyncStream<GRPCServingStatus>.Continuation
    var last: GRPCServingStatus?

    init(_ continuation: AsyncStream<GRPCServingStatus>.Continuation) {
      self.continuation = continuation
    }

    func yield(_ status: GRPCServingStatus) {
      guard status != self.last else { return }
      self.last = status
      self.continuation.yield(status)
    }
  }

  func run(_ continuation: AsyncStream<GRPCServingStatus>.Continuation) async {
    let changes = Changes(continuation)
    defer { continuation.finish() }
    var backoff = Backoff(initial: Self.sane(self.options.initialBackoff), max: Self.sane(self.options.maxBackoff))
    while !Task.isCancelled {
      do {
        try await self.client.watchOnce(service: self.service, callOptions: self.callOptions) { status in
          backoff.reset()
          changes.yield(status)
        }
      } catch let error as GRPCError where error.code == .unimplemented {
        await self.poll(changes)
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
  private func poll(_ changes: Changes) async {
    while !Task.isCancelled {
      do {
        changes.yield(try await self.client.check(service: self.service, callOptions: self.callOptions))
      } catch {
        changes.yield(.unknown)
      }
      try? await Task.sleep(for: .seconds(Self.sane(self.options.pollInterval)))
    }
  }

  /// `seconds`, at least 10 ms; a value that is not a finite number is taken as 1 s.
  private static func sane(_ seconds: TimeInterval) -> TimeInterval {
    seconds.isFinite ? Swift.max(seconds, 0.01) : 1
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
    let wait = self.current * Double.random(in: 0.8...1.2)
    self.current = Swift.min(self.current * 1.6, self.max)
    return wait
  }
}
