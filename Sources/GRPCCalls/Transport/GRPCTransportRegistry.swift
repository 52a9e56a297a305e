internal import Synchronization

/// Transport factories by ID, for ``GRPCCallOptions/transport``.
///
/// The built-in IDs ``GRPCTransportID/secure`` and ``GRPCTransportID/insecure`` always name the
/// HTTP/2 transports and cannot be replaced. An ID with no factory falls back to the transport
/// ``GRPCCallOptions/transportType`` picks, and the channel logs a warning.
public final class GRPCTransportRegistry: Sendable {
  /// The registry calls use.
  public static let shared = GRPCTransportRegistry()

  private let factories = Mutex<[GRPCTransportID: any GRPCTransportFactory]>([:])

  /// Creates an empty registry.
  public init() {}

  /// Registers `factory` under `id`, replacing any factory registered before.
  ///
  /// Registering under a built-in ID does nothing: those name the HTTP/2 transports.
  public func register(_ factory: any GRPCTransportFactory, for id: GRPCTransportID) {
    guard id != .secure, id != .insecure else { return }
    self.factories.withLock { $0[id] = factory }
  }

  /// Removes the factory registered under `id`, if any.
  public func unregister(_ id: GRPCTransportID) {
    self.factories.withLock { $0[id] = nil }
  }

  /// The factory registered under `id`.
  public func factory(for id: GRPCTransportID) -> (any GRPCTransportFactory)? {
    self.factories.withLock { $0[id] }
  }
}
