extension FaultProxy {
  /// What the proxy does to the bytes it carries, switchable while connections run
  /// (``FaultProxy/inject(_:)``).
  ///
  /// Faults that concern the listener rather than the bytes — refusing connections, a network
  /// flap — are ``FaultProxy/stopListening()`` and ``FaultProxy/startListening()``.
  public struct Fault: Sendable, Equatable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
      case none
      case stall
      case reset
      case closeAfter(bytes: Int)
      case delay(Duration)
      case bandwidth(bytesPerSecond: Int)
    }

    let kind: Kind

    /// Bytes pass untouched.
    public static let none = Fault(kind: .none)

    /// A black hole: connections stay open and nothing gets through, in either direction. The
    /// bytes are held, not dropped, as TCP would retransmit them: when the fault ends they
    /// arrive, and a connection neither side gave up on carries on.
    public static let stall = Fault(kind: .stall)

    /// Every connection, open or new, is reset (RST) as soon as the proxy sees it.
    public static let reset = Fault(kind: .reset)

    /// Each connection is reset once `bytes` bytes have passed through it, both directions
    /// counted (the bytes before the cut are delivered).
    public static func closeAfter(bytes: Int) -> Fault { Fault(kind: .closeAfter(bytes: bytes)) }

    /// Each chunk read waits `delay` before it is passed on.
    public static func delay(_ delay: Duration) -> Fault { Fault(kind: .delay(delay)) }

    /// Each direction of each connection carries at most `bytesPerSecond`.
    public static func bandwidth(bytesPerSecond: Int) -> Fault {
      Fault(kind: .bandwidth(bytesPerSecond: max(1, bytesPerSecond)))
    }

    public var description: String {
      switch self.kind {
      case .none: "none"
      case .stall: "stall"
      case .reset: "reset"
      case .closeAfter(let bytes): "close after \(bytes) bytes"
      case .delay(let delay): "delay \(delay) per chunk"
      case .bandwidth(let rate): "\(rate) bytes/s"
      }
    }

    /// The most one read may take: small under a bandwidth cap, so that pacing is smooth.
    func readLimit(buffer: Int) -> Int {
      if case .bandwidth(let rate) = self.kind {
        return max(1, min(buffer, rate / 20))
      }
      return buffer
    }
  }
}
