import GRPCCallsInput
import GRPCCore
import Testing

@testable import GRPCCalls

@Suite("Host parsing and channel keys")
struct HostTargetTests {
  @Test(
    "hosts parse to the core's targets",
    arguments: [
      ("example.com", HostTarget.dns(host: "example.com", port: 443)),
      ("example.com:8080", .dns(host: "example.com", port: 8080)),
      ("127.0.0.1:50051", .ipv4([.init(host: "127.0.0.1", port: 50051)])),
      ("[::1]:50051", .ipv6([.init(host: "::1", port: 50051)])),
      ("[::1]", .ipv6([.init(host: "::1", port: 443)])),
      ("1.2.3.4.example", .dns(host: "1.2.3.4.example", port: 443)),
      ("256.1.1.1:1", .dns(host: "256.1.1.1", port: 1)),
      ("dns:example.com:9", .dns(host: "example.com", port: 9)),
      ("dns:///example.com", .dns(host: "example.com", port: 443)),
      (
        "ipv4:10.0.0.1:1,10.0.0.2:2",
        .ipv4([.init(host: "10.0.0.1", port: 1), .init(host: "10.0.0.2", port: 2)])
      ),
      ("ipv6:[::1]:3", .ipv6([.init(host: "::1", port: 3)])),
      ("unix:/tmp/socket", .unix(path: "/tmp/socket")),
      ("unix:///tmp/socket", .unix(path: "/tmp/socket")),
    ]
  )
  func parses(host: String, expected: HostTarget) throws {
    #expect(try HostTarget(parsing: host) == expected)
  }

  @Test(
    "malformed hosts throw INVALID_ARGUMENT naming the host",
    arguments: [
      "host:notaport", "host:70000", "::1", "[::1", "unix:", "ipv4:", ":80", "dns://auth/x",
      // Address schemes take addresses: the core would only fail to connect, naming none.
      "ipv4:example.com:80", "ipv4:+1.2.3.4:80", "ipv6:[example.com]:80", "[1:2:zz]:80",
    ]
  )
  func rejects(host: String) {
    #expect {
      try HostTarget.parsed(host)
    } throws: { error in
      guard let error = error as? GRPCError else { return false }
      return error.code == .invalidArgument && error.message.contains(host)
    }
  }

  @Test(
    "a URL scheme is refused with the forms that work, word for word",
    arguments: [
      ("http://127.0.0.1:50051", "http"),
      ("https://api.example.com", "https"),
      ("grpc://localhost:50051", "grpc"),
      ("grpcs:api.example.com:443", "grpcs"),
    ]
  )
  func refusesURLSchemes(host: String, scheme: String) {
    #expect {
      try HostTarget.parsed(host)
    } throws: { error in
      (error as? GRPCError)?.message
        == "Invalid host '\(host)': '\(scheme)' is not a gRPC target scheme: "
        + "use host:port, dns:, ipv4:, ipv6: or unix:"
    }
  }

  @Test(
    "names that look like schemes but carry a port are hosts",
    arguments: [
      ("grpc:50051", HostTarget.dns(host: "grpc", port: 50051)),
      ("fe80::1", nil),
      ("localhost:8080", .dns(host: "localhost", port: 8080)),
    ]
  )
  func schemeLookalikes(host: String, expected: HostTarget?) {
    let parsed = try? HostTarget(parsing: host)
    #expect(parsed == expected)
  }

  @Test("`name` and `name:443` are the same channel")
  func defaultPortNormalizes() throws {
    let options = GRPCCallOptions()
    #expect(
      try ChannelKey(host: "example.com", options: options)
        == ChannelKey(host: "example.com:443", options: options)
    )
  }

  @Test(
    "a target prints as a host that parses back to it, even names that read as something else",
    arguments: [
      "example.com", "dns:1.2.3.4", "dns:[::1]:80", "dns:unix:80", "dns:ipv4:1", "unix:////tmp/s",
      "unix:/tmp/s", "ipv4:10.0.0.1:1,10.0.0.2:2", "[fe80::1%eth0]:8", "ipv6:[::1]:1,[::2]:2",
    ]
  )
  func printsBack(host: String) throws {
    let target = try HostTarget(parsing: host)
    #expect(try HostTarget(parsing: target.description) == target, "\(target.description)")
  }

  /// Found by the fuzzer: U+0600 joins the `:` after it into one character, which hid the
  /// delimiter from a search by character, so the printed `name:443` parsed as a name.
  @Test(
    "delimiters are found among scalars, even when a neighbour joins them into one character",
    arguments: [
      ("a\u{0600}", HostTarget.dns(host: "a\u{0600}", port: 443)),
      ("a\u{0600}:80", .dns(host: "a\u{0600}", port: 80)),
      ("[::1]:\u{0301}80", nil),
      ("a:\u{0301}80", nil),
      ("ipv4:10.0.0.1:1,\u{0301}10.0.0.2:2", nil),
      ("unix:\u{0301}s", .unix(path: "\u{0301}s")),
    ] as [(String, HostTarget?)]
  )
  func joinedDelimiters(host: String, expected: HostTarget?) throws {
    let target = try? HostTarget(parsing: host)
    #expect(target == expected)
    if let target {
      #expect(
        try HostTarget(parsing: target.description) == target,
        "\(target.description.debugDescription)"
      )
    }
  }
}
