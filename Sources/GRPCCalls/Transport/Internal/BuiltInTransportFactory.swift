internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix
internal import Logging
internal import NIOCore
internal import NIOPosix

/// The HTTP/2 transports on SwiftNIO, as entries of the ``GRPCTransportRegistry`` under
/// ``GRPCTransportID/secure`` and ``GRPCTransportID/insecure`` (gRPC Objective-C's
/// `GRPCDefaultTransportImplList`). A channel of the built-in transports makes them directly;
/// a factory looked up by ID makes the same transport.
struct BuiltInTransportFactory: GRPCTransportFactory {
  let type: GRPCTransportType

  func makeTransport(target: String, options: GRPCCallOptions) throws -> any ClientTransport {
    var options = options
    options.transport = nil
    options.transportType = self.type
    return try Self.makeTransport(for: ChannelKey(host: target, options: options))
  }

  /// The HTTP/2 transport of a channel with `key`, its connections on `group` (by default
  /// NIO's shared group), logging to `logger` and reporting to `reporter`. After a GOAWAY it connects again at once only
  /// for calls still on the old connection, otherwise for the next call; a DNS name is resolved
  /// again periodically, and the addresses laid out for the balancer (``ReconnectOnDemand``).
  static func makeTransport(
    for key: ChannelKey,
    on group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
    logger: Logger = Logger(label: "grpc-calls"),
    reporter: ConnectivityReporter? = nil
  ) throws -> HTTP2ClientTransport.Posix {
    let demand = ReconnectOnDemand(layout: EndpointLayout(key.serviceConfig))
    var registry = NameResolverRegistry.defaults
    registry.registerFactory(ReconnectOnDemand.Factory())
    return try HTTP2ClientTransport.Posix(
      target: ReconnectOnDemand.Target(
        inner: key.target.resolvableTarget,
        demand: demand,
        interval: key.resolvesPeriodically ? key.nameResolutionInterval : nil
      ),
      transportSecurity: key.transportSecurity,
      config: key.transportConfig(logger: logger, demand: demand, reporter: reporter),
      resolverRegistry: registry,
      serviceConfig: key.serviceConfig,
      eventLoopGroup: group
    )
  }
}
