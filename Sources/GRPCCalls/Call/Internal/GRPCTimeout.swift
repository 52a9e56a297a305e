internal import Foundation

/// The `grpc-timeout` header of the raw path, which runs no executor to send it.
///
/// The gRPC wire format takes at most eight digits and a unit (`n`, `u`, `m`, `S`, `M`, `H`):
/// the finest unit whose value fits is used, rounded up so that the server never sees a
/// deadline earlier than ours.
enum GRPCTimeout {
  static func header(seconds: TimeInterval) -> String {
    let nanoseconds = max(1, (seconds * 1e9).rounded(.up))
    let units: [(Character, Double)] = [
      ("n", 1), ("u", 1e3), ("m", 1e6), ("S", 1e9), ("M", 60e9), ("H", 3600e9),
    ]
    for (unit, scale) in units {
      let value = (nanoseconds / scale).rounded(.up)
      if value <= 99_999_999 {
        return "\(Int(value))\(unit)"
      }
    }
    return "99999999H"
  }
}
