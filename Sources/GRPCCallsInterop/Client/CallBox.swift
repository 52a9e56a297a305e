public import GRPCCalls

/// Holds a call so that a callback created before it can reach it (e.g. to cancel it).
public final class CallBox: Sendable {
  private let storage = LockedValue<GRPCCall2?>(nil)

  public init() {}

  public var call: GRPCCall2? {
    get { self.storage.withLock { $0 } }
    set { self.storage.withLock { $0 = newValue } }
  }
}
