/// The connectivity state of a channel, as gRPC defines it (gRPC's "Connectivity Semantics and
/// API"; grpc-java's `ConnectivityState`).
///
/// One channel serves each host and set of channel-level options of a ``GRPCChannelPool``
/// (``GRPCChannelPool/state(host:options:connect:)``); its state follows its connections:
///
/// | From | To | When |
/// |---|---|---|
/// | IDLE | CONNECTING | a call comes, or ``GRPCChannelPool/connect(host:options:)`` |
/// | CONNECTING, TRANSIENT_FAILURE | READY | a connection is established (the server's SETTINGS) |
/// | CONNECTING | TRANSIENT_FAILURE | a connection attempt fails |
/// | READY | TRANSIENT_FAILURE | the connection breaks under calls (reset, keepalive timeout) |
/// | READY | IDLE | the connection closes with no calls on it (a GOAWAY, a server stopping) |
/// | any but SHUTDOWN | IDLE | the pool closes the channel (``GRPCChannelPool/Config/idleTimeout``, ``GRPCChannelPool/disconnectAll()``) |
/// | any | SHUTDOWN | ``GRPCChannelPool/shutDown()`` |
///
/// As in gRPC core (gRFC A62), TRANSIENT_FAILURE sticks while the channel keeps trying: the
/// state goes from there to READY once a connection is established, not to CONNECTING at each
/// attempt.
public enum GRPCConnectivityState: Sendable, Hashable, CustomStringConvertible {
  /// No connection, and none being made: the next call, or
  /// ``GRPCChannelPool/connect(host:options:)``, connects.
  case idle
  /// A connection is being made; calls wait for it.
  case connecting
  /// A connection is established; calls go out at once.
  case ready
  /// The last connection attempt failed, or a connection broke under calls; the channel keeps
  /// trying, waiting longer after each failed attempt (the reconnection backoff options). Calls
  /// fail with UNAVAILABLE unless they wait for ready.
  case transientFailure
  /// The pool was shut down (``GRPCChannelPool/shutDown()``): no new calls; the state does not
  /// change again.
  case shutdown

  public var description: String {
    switch self {
    case .idle: "IDLE"
    case .connecting: "CONNECTING"
    case .ready: "READY"
    case .transientFailure: "TRANSIENT_FAILURE"
    case .shutdown: "SHUTDOWN"
    }
  }
}
