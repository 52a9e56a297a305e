public import Foundation
public import GRPCCore

/// How a call is retried or hedged when an attempt fails; the core carries it out.
///
/// Set it as ``GRPCCallOptions/executionPolicy``. It applies only while
/// ``GRPCCallOptions/enableRetry`` is on. An invalid policy fails the call with
/// `INVALID_ARGUMENT` naming the problem, rather than reaching the core (which traps on some).
public struct GRPCExecutionPolicy: Hashable, Sendable {
  enum Wrapped: Hashable, Sendable {
    case retry(GRPCRetryPolicy)
    case hedge(GRPCHedgingPolicy)
  }

  let wrapped: Wrapped

  /// Retry a failed attempt, after a backoff, while its status is retryable.
  public static func retry(_ policy: GRPCRetryPolicy) -> Self {
    Self(wrapped: .retry(policy))
  }

  /// Send up to `maxAttempts` copies, `hedgingDelay` apart, until one succeeds or fails
  /// fatally. Only for methods whose ``GRPCRequestOptions/safety`` is idempotent or cacheable:
  /// on any other the call fails with `INVALID_ARGUMENT`.
  public static func hedge(_ policy: GRPCHedgingPolicy) -> Self {
    Self(wrapped: .hedge(policy))
  }

  /// The core's policy for a call to a method of `safety`.
  ///
  /// - Throws: `INVALID_ARGUMENT` naming what is wrong with the policy.
  func core(safety: GRPCCallSafety) throws(GRPCError) -> RPCExecutionPolicy {
    switch self.wrapped {
    case .retry(let policy):
      return .retry(try policy.core())
    case .hedge(let policy):
      let hedging = try policy.core()
      guard safety != .default else {
        throw GRPCError(
          code: .invalidArgument,
          message:
            "A hedging policy needs an idempotent or cacheable method (GRPCRequestOptions.safety)"
        )
      }
      return .hedge(hedging)
    }
  }
}

/// When and how often a failed call is tried again (gRFC A6).
public struct GRPCRetryPolicy: Hashable, Sendable {
  /// Attempts in all, the first included: 2 to 5 (more are treated as 5, as in gRPC).
  public var maxAttempts: Int
  /// The backoff before the first retry, in seconds; > 0.
  public var initialBackoff: TimeInterval
  /// The longest backoff, in seconds; > 0.
  public var maxBackoff: TimeInterval
  /// What each backoff is multiplied by; > 0.
  public var backoffMultiplier: Double
  /// The statuses worth retrying; not empty.
  public var retryableStatusCodes: Set<RPCError.Code>

  /// Creates a retry policy.
  public init(
    maxAttempts: Int,
    initialBackoff: TimeInterval = 0.1,
    maxBackoff: TimeInterval = 1,
    backoffMultiplier: Double = 2,
    retryableStatusCodes: Set<RPCError.Code> = [.unavailable]
  ) {
    self.maxAttempts = maxAttempts
    self.initialBackoff = initialBackoff
    self.maxBackoff = maxBackoff
    self.backoffMultiplier = backoffMultiplier
    self.retryableStatusCodes = retryableStatusCodes
  }

  func core() throws(GRPCError) -> RetryPolicy {
    try PolicyCheck.attempts(self.maxAttempts)
    try PolicyCheck.positive(self.initialBackoff, "initialBackoff")
    try PolicyCheck.positive(self.maxBackoff, "maxBackoff")
    try PolicyCheck.positive(self.backoffMultiplier, "backoffMultiplier")
    guard !self.retryableStatusCodes.isEmpty else {
      throw PolicyCheck.invalid("retryableStatusCodes must not be empty")
    }
    return RetryPolicy(
      maxAttempts: self.maxAttempts,
      initialBackoff: .seconds(self.initialBackoff),
      maxBackoff: .seconds(max(self.maxBackoff, self.initialBackoff)),
      backoffMultiplier: self.backoffMultiplier,
      retryableStatusCodes: Set(self.retryableStatusCodes.map { Status.Code($0) })
    )
  }
}

/// How many copies of a call are sent, and how far apart (gRFC A6).
public struct GRPCHedgingPolicy: Hashable, Sendable {
  /// Copies in all, the first included: 2 to 5 (more are treated as 5, as in gRPC).
  public var maxAttempts: Int
  /// Seconds between copies; ≥ 0.
  public var hedgingDelay: TimeInterval
  /// Statuses after which the remaining copies still go ahead.
  public var nonFatalStatusCodes: Set<RPCError.Code>

  /// Creates a hedging policy.
  public init(
    maxAttempts: Int,
    hedgingDelay: TimeInterval,
    nonFatalStatusCodes: Set<RPCError.Code> = [.unavailable]
  ) {
    self.maxAttempts = maxAttempts
    self.hedgingDelay = hedgingDelay
    self.nonFatalStatusCodes = nonFatalStatusCodes
  }

  func core() throws(GRPCError) -> HedgingPolicy {
    try PolicyCheck.attempts(self.maxAttempts)
    guard self.hedgingDelay >= 0, self.hedgingDelay.isFinite else {
      throw PolicyCheck.invalid("hedgingDelay must be 0 or more seconds, not \(self.hedgingDelay)")
    }
    return HedgingPolicy(
      maxAttempts: self.maxAttempts,
      hedgingDelay: .seconds(self.hedgingDelay),
      nonFatalStatusCodes: Set(self.nonFatalStatusCodes.map { Status.Code($0) })
    )
  }
}

/// The checks the core would otherwise trap on.
private enum PolicyCheck {
  static func invalid(_ reason: String) -> GRPCError {
    GRPCError(code: .invalidArgument, message: "Invalid execution policy: \(reason)")
  }

  static func attempts(_ count: Int) throws(GRPCError) {
    guard count > 1 else {
      throw Self.invalid("maxAttempts must be at least 2, not \(count)")
    }
  }

  static func positive(_ value: Double, _ name: String) throws(GRPCError) {
    guard value > 0, value.isFinite else {
      throw Self.invalid("\(name) must be more than 0, not \(value)")
    }
  }
}
