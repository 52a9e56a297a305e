/// The value of a gRPC channel argument in ``GRPCCallOptions/additionalChannelArgs``: an integer
/// or a string, as in gRPC core.
public enum GRPCChannelArgValue: Hashable, Sendable, ExpressibleByIntegerLiteral,
  ExpressibleByStringLiteral, CustomStringConvertible
{
  case integer(Int)
  case string(String)

  public init(integerLiteral value: Int) {
    self = .integer(value)
  }

  public init(stringLiteral value: String) {
    self = .string(value)
  }

  public var description: String {
    switch self {
    case .integer(let value): "\(value)"
    case .string(let value): value.debugDescription
    }
  }
}
