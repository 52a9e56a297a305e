/// Transport factories by ID, for ``GRPCCallOptions/transport``.
///
/// The built-in IDs ``GRPCTransportID/secure`` and ``GRPCTransportID/insecure`` are entries like
/// any other, always naming the HTTP/2 transports: they cannot be replaced or removed. An ID
/// with no factory falls back to the transport ``GRPCCallOptions/transportType`` picks, and the
/// channel logs a warning.
///
/// A factory's ``GRPCTransportFactory/interceptorFactories`` run last in the chain of every
/// call that names it, after the per-call and global interceptors.
public final class GRPCTransportRegistry: Sendable {
  /// The registry calls use.
  public static let shared = GRPCTransportRegistry()

  private let factories = LockedValue<[GRPCTransportID: any GRPCTransportFactory]>([:])

  /// Creates an empty registry.
  public init() {}

  /// Registers `factory` under `id`, replacing any factory registered before.
  ///
  /// Registering under a built-in ID does nothing: those name the HTTP/2 transports.
  public func register(_ factory: any GRPCTransportFactory, for id: GRPCTransportID) {
    guard id != .secure, id != .insecure else { return }
    self.factories.withLock { $0[id] = factory }
  }

  /// Removes the factory registered under `id`, if any; the built-in ones stay.
  public func unregister(_ id: GRPCTransportID) {
    self.factories.withLock { $0[id] = nil }
  }

  /// The factory registered under `id`, or the built-in one for ``GRPCTransportID/secure`` and
  /// ``GRPCTransportID/insecure``.
  public func factory(for id: GRPCTransportID) -> (any GRPCTransportFactory)? {
    switch id {
    case .secure: BuiltInTransportFactory(type: .tls)
    case .insecure: BuiltInTransportFactory(type: .insecure)
    default: self.factories.withLock { $0[id] }
    }
  }

  /// The IDs with a factory: the built-in ones and every registered one.
  public var registeredIDs: Set<GRPCTransportID> {
    self.factories.withLock { Set($0.keys) }.union([.secure, .insecure])
  }
}
