public import Foundation

/// How ``GRPCHealthClient/watch(service:options:callOptions:)`` keeps watching when the stream
/// ends or the server does not implement `Watch`. Times count as at least 10 ms and at most a
/// day.
public struct GRPCHealthWatchOptions: Sendable, Hashable {
  /// The wait before the first new `Watch` after the stream ended, in seconds. Each further
  /// failure multiplies it by 1.6 (with ±20 % jitter) up to ``maxBackoff``; a status that
  /// arrives resets it. gRPC's connection backoff, which the health protocol asks for.
  public var initialBackoff: TimeInterval
  /// The longest wait between two `Watch` calls, in seconds.
  public var maxBackoff: TimeInterval
  /// How often `Check` is asked instead, in seconds, when the server answers `Watch` with
  /// `UNIMPLEMENTED` (a server whose health service predates `Watch`).
  public var pollInterval: TimeInterval

  /// Creates watch options; the defaults are gRPC's connection backoff and a 5-second poll.
  public init(
    initialBackoff: TimeInterval = 1,
    maxBackoff: TimeInterval = 120,
    pollInterval: TimeInterval = 5
  ) {
    self.initialBackoff = initialBackoff
    self.maxBackoff = maxBackoff
    self.pollInterval = pollInterval
  }
}
