internal import Foundation
public import GRPCCalls
internal import GRPCCore

/// The settings of one host, as gRPC Objective-C's `GRPCHost` kept them for its per-host class
/// setters; a v1 call made without call options reads them when it starts.
///
/// Hosts are normalized (`example.com` and `example.com:443` are one host) and shared process-
/// wide. Settings of one host never touch calls to another, and calls with explicit options
/// ignore them all.
///
/// ```swift
/// try GRPCHost.setUserAgentPrefix("MyApp/1.0", forHost: "api.example.com")
/// try GRPCHost.useInsecureConnections(forHost: "localhost:50051")
/// let options = try GRPCHost.callOptions(forHost: "localhost:50051")
/// ```
public final class GRPCHost: Sendable {
  /// The host as `name:port` (`[v6]:port` for an IPv6 address; port 443 when none was given).
  public let address: String
  private let state: LockedValue<GRPCHostSettings>

  /// Every host with settings, process-wide.
  static let table = Table()

  /// Hosts by normalized address, made on first use.
  final class Table: Sendable {
    private let hosts = LockedValue<[String: GRPCHost]>([:])

    func host(_ normalized: String) -> GRPCHost {
      self.hosts.withLock { hosts in
        if let host = hosts[normalized] { return host }
        let host = GRPCHost(address: normalized)
        hosts[normalized] = host
        return host
      }
    }

    func reset() {
      self.hosts.withLock { $0.removeAll() }
    }
  }

  private init(address: String) {
    self.address = address
    self.state = LockedValue(GRPCHostSettings())
  }

  /// The host `address` names, made on first use.
  ///
  /// - Throws: `INVALID_ARGUMENT` for an empty or malformed host.
  public static func host(withAddress address: String) throws(GRPCError) -> GRPCHost {
    Self.table.host(try Self.normalize(address))
  }

  /// A copy of the host's settings.
  public var settings: GRPCHostSettings {
    self.state.withLock { $0 }
  }

  /// Changes the host's settings under its lock.
  public func updateSettings(_ body: (inout GRPCHostSettings) -> Void) {
    self.state.withLock { body(&$0) }
  }

  /// The options a v1 call to `host` without options of its own runs with.
  public static func callOptions(forHost host: String) throws(GRPCError) -> GRPCCallOptions {
    try Self.host(withAddress: host).settings.callOptions
  }

  /// Forgets every host's settings (`+[GRPCCall resetHostSettings]`).
  public static func resetHostSettings() {
    Self.table.reset()
  }

  /// Closes every idle and active connection of the shared channel pool
  /// (`+[GRPCCall closeOpenConnections]`); calls on them fail with `UNAVAILABLE`.
  public static func closeOpenConnections() {
    GRPCChannelPool.shared.disconnectAll()
  }

  private static func normalize(_ address: String) throws(GRPCError) -> String {
    guard !address.trimmingCharacters(in: .whitespaces).isEmpty else {
      throw GRPCError(
        code: .invalidArgument,
        message: "The host is empty: pass a host name or address, e.g. \"example.com:443\""
      )
    }
    return try GRPCRequestOptions.normalizedHost(address)
  }
}
