/// A call's `host` parsed into what the core resolves.
///
/// Accepted forms (the Options article of GRPCCalls): `name[:port]` and `[v6-literal][:port]` (no port means 443;
/// an IP literal becomes an address target, a name a DNS one),
/// or a target with a scheme: `dns:name[:port]` (also `dns:///name:port`),
/// `ipv4:addr:port[,addr:port…]`, `ipv6:[addr]:port[,…]`, `unix:path`. The core resolves them,
/// and the channel's balancer spreads calls over the addresses (round-robin) or uses the first
/// that accepts a connection, moving on when it fails (pick-first, the default).
package enum HostTarget: Hashable, Sendable {
  case dns(host: String, port: Int)
  case ipv4([Address])
  case ipv6([Address])
  case unix(path: String)

  package struct Address: Hashable, Sendable {
    package var host: String
    package var port: Int

    package init(host: String, port: Int) {
      self.host = host
      self.port = port
    }
  }

  package static let defaultPort = 443

  /// Parses `host`, throwing the reason when it is malformed.
  ///
  /// Delimiters (`:`, `[`, `]`, `,`, `/`) are found among the Unicode scalars, not the
  /// characters: a scalar that joins the next one into a character (U+0600 before `:`, a
  /// combining mark after it) must not hide a delimiter, or a name would print as a host string
  /// that parses as something else.
  package init(parsing host: String) throws(InvalidInput) {
    func invalid(_ reason: String) -> InvalidInput {
      InvalidInput("Invalid host '\(host)': \(reason)")
    }

    if let scheme = Self.foreignScheme(in: host) {
      throw invalid(
        "'\(scheme)' is not a gRPC target scheme: use host:port, dns:, ipv4:, ipv6: or unix:"
      )
    }

    if let rest = host.dropPrefix("unix:") {
      let path = rest.dropPrefix("//") ?? rest
      guard !path.isEmpty else { throw invalid("the unix socket path is empty") }
      self = .unix(path: String(path))
    } else if let rest = host.dropPrefix("ipv4:") {
      let addresses = try Self.addresses(rest, invalid: invalid)
      // The core would only fail to connect, naming no address.
      if let name = addresses.first(where: { !Self.isIPv4Literal($0.host) })?.host {
        throw invalid(
          "'\(name)' is not an IPv4 address: ipv4: takes addresses such as 10.0.0.1:50051 (use dns: for names)"
        )
      }
      self = .ipv4(addresses)
    } else if let rest = host.dropPrefix("ipv6:") {
      let addresses = try Self.addresses(rest, invalid: invalid)
      if let name = addresses.first(where: { !Self.isIPv6Literal($0.host) })?.host {
        throw invalid(
          "'\(name)' is not an IPv6 address: ipv6: takes addresses such as [::1]:50051 (use dns: for names)"
        )
      }
      self = .ipv6(addresses)
    } else if let rest = host.dropPrefix("dns:") {
      // "dns:///name:port" names no DNS authority; "dns://authority/name" is not supported.
      let name = rest.dropPrefix("///") ?? rest
      guard !name.containsScalar("/") else { throw invalid("a DNS authority is not supported") }
      let address = try Self.address(name, invalid: invalid)
      self = .dns(host: address.host, port: address.port)
    } else {
      // An IP literal needs no resolving, and must not become a TLS server name (SNI cannot
      // carry an address): give it to the core as an address.
      let address = try Self.address(Substring(host), invalid: invalid)
      if address.host.containsScalar(":") {
        guard Self.isIPv6Literal(address.host) else {
          throw invalid("'\(address.host)' is not an IPv6 address")
        }
        self = .ipv6([address])
      } else if Self.isIPv4Literal(address.host) {
        self = .ipv4([address])
      } else {
        self = .dns(host: address.host, port: address.port)
      }
    }
  }

  /// The scheme of a URL-like `host` (`http://…`, `grpc://…`, `https:name`) that is none of
  /// ours: a scheme followed by `/`, or a common URL scheme. `name:port` is a host name.
  private static func foreignScheme(in host: String) -> Substring? {
    let host = host[...]
    guard let colon = host.firstScalarIndex(of: ":") else { return nil }
    let scheme = host.scalars(before: colon)
    let rest = host.scalars(after: colon)
    guard let first = scheme.first, first.isLetter,
      scheme.allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
      !["unix", "ipv4", "ipv6", "dns"].contains(scheme)
    else { return nil }
    if !rest.isEmpty, rest.allSatisfy(\.isNumber) { return nil }  // a host named `grpc`, a port
    let urlSchemes: Set<Substring> = ["http", "https", "grpc", "grpcs", "tcp", "xds"]
    return rest.dropPrefix("/") != nil || urlSchemes.contains(scheme.lowercased()[...])
      ? scheme : nil
  }

  private static func isIPv4Literal(_ host: some StringProtocol) -> Bool {
    let parts = host.split(separator: ".", omittingEmptySubsequences: false)
    return parts.count == 4
      && parts.allSatisfy {
        $0.count <= 3 && $0.allSatisfy { $0.isASCII && $0.isNumber } && UInt8($0) != nil
      }
  }

  /// Whether `host` is written as an IPv6 address (hexadecimal groups, `:`, a dotted IPv4 tail,
  /// an optional `%zone`), so that the core is given no name to parse as an address.
  private static func isIPv6Literal(_ host: String) -> Bool {
    let parts = host.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
    let address = parts[0]
    guard address.contains(":"), address.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }),
      address.allSatisfy(\.isASCII)
    else { return false }
    guard parts.count == 2 else { return true }
    return !parts[1].isEmpty
      && parts[1].allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }
  }

  /// The DNS name a TLS certificate is verified against; `nil` for an address or socket path.
  package var hostName: String? {
    if case .dns(let host, _) = self { return host }
    return nil
  }

  private static func addresses(
    _ list: Substring,
    invalid: (String) -> InvalidInput
  ) throws(InvalidInput) -> [Address] {
    let parts = list.unicodeScalars.split(separator: ",", omittingEmptySubsequences: false).map(
      Substring.init
    )
    guard !list.isEmpty else { throw invalid("no address is given") }
    var addresses: [Address] = []
    for part in parts {
      addresses.append(try Self.address(part, invalid: invalid))
    }
    return addresses
  }

  /// Splits `name[:port]` or `[v6]:port`; no port means 443.
  private static func address(
    _ text: Substring,
    invalid: (String) -> InvalidInput
  ) throws(InvalidInput) -> Address {
    var name = text
    var portText: Substring?
    if let bracketed = text.dropPrefix("[") {
      guard let close = bracketed.firstScalarIndex(of: "]") else {
        throw invalid("unterminated '['")
      }
      name = bracketed.scalars(before: close)
      let after = bracketed.scalars(after: close)
      if !after.isEmpty {
        guard let port = after.dropPrefix(":") else { throw invalid("unexpected text after ']'") }
        portText = port
      }
    } else if let colon = text.lastScalarIndex(of: ":") {
      guard text.firstScalarIndex(of: ":") == colon else {
        throw invalid("an IPv6 address must be written in brackets, as [::1]:443")
      }
      name = text.scalars(before: colon)
      portText = text.scalars(after: colon)
    }
    guard !name.isEmpty else { throw invalid("the host name is empty") }
    // No name or address holds these; a resolver would only say it found nothing.
    guard
      !name.unicodeScalars.contains(where: {
        $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F
      })
    else {
      throw invalid("the host name contains a space or a control character")
    }
    // Target syntax: left in a name, they give one that prints as something else, or none.
    if let delimiter = name.unicodeScalars.first(where: { "[]/@?#,".unicodeScalars.contains($0) }) {
      throw invalid(
        "the host name contains '\(delimiter)': write name[:port], [IPv6]:port, or a list after ipv4: or ipv6:"
      )
    }
    var port = Self.defaultPort
    if let portText {
      guard let value = Int(portText) else {
        throw invalid("'\(portText)' is not a port number")
      }
      guard (0 ... 65535).contains(value) else {
        throw invalid("port \(value) is out of range: ports are 0 to 65535")
      }
      port = value
    }
    return Address(host: String(name), port: port)
  }
}

// Scalar-level searching and slicing, for delimiters (see `HostTarget.init(parsing:)`).
extension StringProtocol {
  fileprivate func dropPrefix(_ prefix: String) -> Substring? {
    let scalars = Substring(self).unicodeScalars
    guard scalars.starts(with: prefix.unicodeScalars) else { return nil }
    return Substring(scalars.dropFirst(prefix.unicodeScalars.count))
  }

  fileprivate func containsScalar(_ scalar: Unicode.Scalar) -> Bool {
    self.unicodeScalars.contains(scalar)
  }
}

extension Substring {
  fileprivate func firstScalarIndex(of scalar: Unicode.Scalar) -> Index? {
    self.unicodeScalars.firstIndex(of: scalar)
  }

  fileprivate func lastScalarIndex(of scalar: Unicode.Scalar) -> Index? {
    self.unicodeScalars.lastIndex(of: scalar)
  }

  /// The scalars before `index`, a scalar's index.
  fileprivate func scalars(before index: Index) -> Substring {
    Substring(self.unicodeScalars[..<index])
  }

  /// The scalars after the one at `index`.
  fileprivate func scalars(after index: Index) -> Substring {
    Substring(self.unicodeScalars[self.unicodeScalars.index(after: index)...])
  }
}

extension HostTarget: CustomStringConvertible {
  /// The target as a host string that parses back to it: `name:port`, `127.0.0.1:port`,
  /// `[::1]:port`, `ipv4:a:p,b:q`, `unix:path`; a name that would read as something else
  /// keeps its scheme (`dns:1.2.3.4:443`, `dns:unix:80`).
  package var description: String {
    switch self {
    case .dns(let host, let port):
      let plain = host.containsScalar(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
      if (try? HostTarget(parsing: plain)) == self { return plain }
      return "dns:\(plain)"
    case .ipv4(let addresses):
      let list = addresses.map { "\($0.host):\($0.port)" }.joined(separator: ",")
      return addresses.count == 1 ? list : "ipv4:\(list)"
    case .ipv6(let addresses):
      let list = addresses.map { "[\($0.host)]:\($0.port)" }.joined(separator: ",")
      return addresses.count == 1 ? list : "ipv6:\(list)"
    case .unix(let path):
      // The parser takes `unix://path` as `unix:path`: a path that starts with `//` needs it.
      return path.dropPrefix("//") != nil ? "unix://\(path)" : "unix:\(path)"
    }
  }
}
