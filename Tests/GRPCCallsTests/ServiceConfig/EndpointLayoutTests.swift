import GRPCCore
import GRPCNIOTransportHTTP2Posix
import Testing

@testable import GRPCCalls

@Suite("EndpointLayout (no I/O)")
struct EndpointLayoutTests {
  static let addresses: [GRPCNIOTransportHTTP2Posix.SocketAddress] = [
    .ipv4(host: "127.0.0.1", port: 1), .ipv4(host: "127.0.0.2", port: 2),
    .ipv4(host: "127.0.0.3", port: 3),
  ]

  @Test("the balancer's layout follows the first supported policy; pick-first by default")
  func layoutFromConfig() {
    #expect(EndpointLayout(ServiceConfig()) == .oneEndpoint)
    #expect(
      EndpointLayout(ServiceConfig(loadBalancingConfig: [.roundRobin])) == .endpointPerAddress
    )
    #expect(
      EndpointLayout(
        ServiceConfig(loadBalancingConfig: [.pickFirst(shuffleAddressList: false), .roundRobin])
      ) == .oneEndpoint
    )
  }

  @Test(
    "a DNS name's one endpoint of several addresses and an address list's endpoint per address give each policy every address, in order, once"
  )
  func arranges() {
    let dnsShaped = NameResolutionResult(
      endpoints: [Endpoint(addresses: Self.addresses)],
      serviceConfig: nil
    )
    let listShaped = NameResolutionResult(
      endpoints: Self.addresses.map { Endpoint(addresses: [$0]) } + [
        Endpoint(addresses: [Self.addresses[0]])
      ],
      serviceConfig: nil
    )
    for result in [dnsShaped, listShaped] {
      #expect(
        EndpointLayout.oneEndpoint.arrange(result).endpoints == [
          Endpoint(addresses: Self.addresses)
        ]
      )
      #expect(
        EndpointLayout.endpointPerAddress.arrange(result).endpoints
          == Self.addresses.map { Endpoint(addresses: [$0]) }
      )
    }
  }

  @Test("removing servers leaves their endpoints out, and nothing when none or all would go")
  func removing() {
    let result = EndpointLayout.endpointPerAddress.arrange(
      NameResolutionResult(endpoints: [Endpoint(addresses: Self.addresses)], serviceConfig: nil)
    )
    let first = ServerAddress(Self.addresses[0])!
    #expect(
      EndpointLayout.removing([first], from: result)?.endpoints
        == Self.addresses.dropFirst().map { Endpoint(addresses: [$0]) }
    )
    let firstTwo: Set = [first, ServerAddress(Self.addresses[1])!]
    #expect(
      EndpointLayout.removing(firstTwo, from: result)?.endpoints
        == [Endpoint(addresses: [Self.addresses[2]])]
    )
    #expect(
      EndpointLayout.removing([ServerAddress(host: "10.9.9.9", port: 1)], from: result) == nil
    )
    let all = Set(Self.addresses.compactMap(ServerAddress.init))
    #expect(EndpointLayout.removing(all, from: result) == nil)
    let single = NameResolutionResult(
      endpoints: [Endpoint(addresses: [Self.addresses[0]])],
      serviceConfig: nil
    )
    #expect(EndpointLayout.removing([first], from: single) == nil)
  }

  @Test("an IPv6 address is one server however it is spelt")
  func ipv6Spellings() {
    let resolved = ServerAddress(
      GRPCNIOTransportHTTP2Posix.SocketAddress.ipv6(host: "0:0:0:0:0:0:0:1", port: 7)
    )
    #expect(resolved == ServerAddress(host: "::1", port: 7))
    #expect(resolved != ServerAddress(host: "::1", port: 8))
    #expect(ServerAddress(host: "127.0.0.1", port: 7) != ServerAddress(host: "::1", port: 7))
  }
}
