internal import GRPCCallsInterop

/// A case the interop command knows: one it runs, or one it lists as not supported yet.
struct InteropCaseName: Sendable {
  enum Kind: Sendable {
    case supported(InteropTestCase)
    /// `cacheable_unary`: runs only through a response cache (`--use_cache`).
    case cacheable
    case unsupported(reason: String)
  }

  let name: String
  let kind: Kind

  /// Cases of the interop test descriptions that need what the library does not have yet.
  /// They are reported, never silently passed.
  private static let unsupported: [(String, String)] = []

  /// Every case, in the order of the interop test descriptions' list.
  static let all: [InteropCaseName] =
    InteropTestCase.allCases.map { InteropCaseName(name: $0.rawValue, kind: .supported($0)) }
    + [InteropCaseName(name: "cacheable_unary", kind: .cacheable)]
    + Self.unsupported.map { InteropCaseName(name: $0.0, kind: .unsupported(reason: $0.1)) }

  init?(_ name: String) {
    guard let known = Self.all.first(where: { $0.name == name }) else { return nil }
    self = known
  }

  private init(name: String, kind: Kind) {
    self.name = name
    self.kind = kind
  }
}

extension InteropCaseName {
  var isCacheable: Bool {
    if case .cacheable = self.kind { return true }
    return false
  }
}
