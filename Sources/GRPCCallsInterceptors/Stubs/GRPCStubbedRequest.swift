internal import GRPCCalls
public import GRPCCore

/// A call a ``GRPCStubInterceptorFactory`` saw: its path, request metadata and messages.
public struct GRPCStubbedRequest: Sendable {
  /// The method's path, `/package.Service/Method`.
  public var path: String
  /// The request metadata.
  public var metadata: Metadata
  /// The request messages: typed for calls with a marshaller, `Data` otherwise.
  public var messages: [any Sendable]
  /// Whether a stub answered it (`false`: it passed through or failed as unmatched).
  public var stubbed: Bool
}

/// The calls every interceptor of one factory saw, in the order they half-closed.
final class StubRequestLog: Sendable {
  private let requests = LockedValue<[GRPCStubbedRequest]>([])

  func append(_ request: GRPCStubbedRequest) {
    self.requests.withLock { $0.append(request) }
  }

  var all: [GRPCStubbedRequest] { self.requests.withLock { $0 } }
}
