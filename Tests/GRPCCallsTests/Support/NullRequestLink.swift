@testable import GRPCCalls

/// An element of a call's request path that does nothing: for state machine tests, which only
/// hold links and pass them on.
final class NullRequestLink: RequestLink {
  func start(
    requestOptions: GRPCRequestOptions,
    callOptions: GRPCCallOptions,
    writes: [any Sendable],
    finish: Bool
  ) {}
  func write(_ message: any Sendable) {}
  func finish() {}
  func cancel() {}
  func receiveNextMessages(_ count: Int) {}
}
