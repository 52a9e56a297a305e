internal import GRPCCallsInput
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix
internal import Logging
internal import NIOPosix

/// One channel of the pool: the connections to one target with the settings of one
/// ``ChannelKey``, each a transport of its own (``ChannelConnection``).
///
/// A channel has ``GRPCCallOptions/connectionsPerTarget`` of them (one for a registered
/// transport); the pool starts each when a call first needs it (``PoolState``). The core's
/// client queues RPCs until its connections run, so a call may use a connection as soon as it
/// started.
final class GRPCChannel: Sendable {
  let key: ChannelKey
  let connections: [ChannelConnection]
  /// Where its connections report their progress; `nil` for a registered transport, whose
  /// connections the pool does not see.
  private let reporter: ConnectivityReporter?
  let metrics: ChannelMetrics
  private let logger: Logger

  /// - Parameters:
  ///   - key: The channel's settings.
  ///   - options: The options of the call opening it, for a registered transport's factory.
  ///   - registry: Where registered transports are looked up.
  ///   - logger: Where the channel logs; the key's log context is added to its metadata.
  ///   - metrics: Its target's figures.
  ///   - monitor: The connectivity state of the key, which the channel's connections update.
  init(
    key: ChannelKey,
    options: GRPCCallOptions,
    registry: GRPCTransportRegistry,
    logger: Logger,
    metrics: ChannelMetrics,
    monitor: ConnectivityMonitor
  ) throws(GRPCError) {
    var logger = logger
    for (name, value) in key.logContext {
      logger[metadataKey: name] = "\(value)"
    }
    logger[metadataKey: "grpc-calls.target"] = "\(key.target)"
    self.key = key
    self.logger = logger
    self.metrics = metrics
    if !key.unknownChannelArgs.isEmpty {
      let names = key.unknownChannelArgs.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
      logger.warning(
        "Ignoring channel arguments that grpc-calls does not map to any setting: \(names) (gRPC core ignores unknown arguments too); they still keep this channel apart from others"
      )
    }
    do {
      if let id = key.transport, let factory = registry.factory(for: id) {
        let client = makeChannelClient(
          try factory.makeTransport(target: key.target.description, options: options)
        )
        self.connections = [ChannelConnection(client: client, executor: nil, logger: logger)]
        self.reporter = nil
        logger.debug("Opened a channel", metadata: ["grpc-calls.transport": "\(id)"])
        return
      }
      if let id = key.transport {
        logger.warning(
          "No transport is registered as '\(id)'; using \(key.transportType)",
          metadata: ["grpc-calls.transport": "\(id)"]
        )
        if key.transportType == .cronet {
          throw ChannelKey.cronetUnavailable
        }
      }
      let reporter = monitor.makeReporter(metrics: self.metrics)
      var connections: [ChannelConnection] = []
      for _ in 0 ..< key.connectionsPerTarget {
        // One loop for each connection: the tasks of its calls run there too.
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let client = makeChannelClient(
          try BuiltInTransportFactory.makeTransport(
            for: key,
            on: loop,
            logger: logger,
            reporter: reporter
          )
        )
        connections.append(
          ChannelConnection(
            client: client,
            executor: EventLoopTaskExecutor(loop: loop),
            logger: logger
          )
        )
      }
      self.connections = connections
      self.reporter = reporter
      logger.debug("Opened a channel", metadata: ["grpc-calls.transport": "\(key.transportType)"])
    } catch let error as GRPCError {
      throw error
    } catch {
      if let invalid = TLSConfigurationFailure.error(for: error, tls: key.tls) {
        throw invalid
      }
      throw GRPCError(
        code: .unavailable,
        message: "Unable to create a channel to \(key.target): \(error)",
        cause: error
      )
    }
  }

  /// The channel joined the pool: its connections' progress counts for the key's state from
  /// now on, before any of them starts.
  func startReporting() {
    self.reporter?.start()
  }

  /// Closes the channel: no new RPCs; each connection closes once the RPCs on it have finished.
  func shutDown() {
    self.logger.debug("Closing an idle channel")
    self.reporter?.channelClosed()
    for connection in self.connections {
      connection.shutDown()
    }
  }

  /// Closes the channel and its connections at once, failing the RPCs still on them.
  func close() {
    self.logger.debug("Closing a channel")
    self.reporter?.channelClosed()
    for connection in self.connections {
      connection.close()
    }
  }
}

/// One of a channel's connections: a `GRPCClient` on a transport of its own, on one event loop.
final class ChannelConnection: Sendable {
  let client: any ChannelClient
  /// The executor of the loop the connection runs on, for the tasks of the calls on it; `nil`
  /// for a registered transport, whose threads the pool does not know.
  let executor: EventLoopTaskExecutor?
  private let logger: Logger
  private let runTask = LockedValue<Task<Void, Never>?>(nil)

  init(client: any ChannelClient, executor: EventLoopTaskExecutor?, logger: Logger) {
    self.client = client
    self.executor = executor
    self.logger = logger
  }

  /// Starts running the connection, in a task of its own.
  func start() {
    let client = self.client
    let logger = self.logger
    let task = Task<Void, Never> {
      // Errors here are connection-level; each RPC reports its own failure to its caller.
      do {
        try await client.runConnections()
      } catch {
        logger.debug("The channel's connections ended", metadata: ["grpc-calls.error": "\(error)"])
      }
    }
    self.runTask.withLock { $0 = task }
  }

  func shutDown() {
    self.client.beginGracefulShutdown()
  }

  func close() {
    self.client.beginGracefulShutdown()
    self.runTask.withLock { $0 }?.cancel()
  }
}
