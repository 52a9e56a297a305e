internal import GRPCCallsInput
internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix
internal import Logging
internal import NIOPosix

/// One channel of the pool: a `GRPCClient` on one transport to one target, with the settings
/// of one ``ChannelKey``.
///
/// The transport is the HTTP/2 one unless the key names a registered transport. The core's
/// client queues RPCs until its connections run, so calls may use the channel as soon as it
/// exists; ``start()`` runs the connections in a task of their own.
final class GRPCChannel: Sendable {
  let key: ChannelKey
  let client: any ChannelClient
  /// The executor of the loop the channel's connections run on, for the tasks of the calls on
  /// it; `nil` for a registered transport, whose threads the pool does not know.
  let executor: EventLoopTaskExecutor?
  /// Where its connections report their progress; `nil` for a registered transport, whose
  /// connections the pool does not see.
  private let reporter: ConnectivityReporter?
  private let logger: Logger
  private let runTask = LockedValue<Task<Void, Never>?>(nil)

  /// - Parameters:
  ///   - key: The channel's settings.
  ///   - options: The options of the call opening it, for a registered transport's factory.
  ///   - registry: Where registered transports are looked up.
  ///   - logger: Where the channel logs; the key's log context is added to its metadata.
  ///   - monitor: The connectivity state of the key, which the channel's connections update.
  init(
    key: ChannelKey,
    options: GRPCCallOptions,
    registry: GRPCTransportRegistry,
    logger: Logger,
    monitor: ConnectivityMonitor
  ) throws(GRPCError) {
    var logger = logger
    for (name, value) in key.logContext {
      logger[metadataKey: name] = "\(value)"
    }
    logger[metadataKey: "grpc-calls.target"] = "\(key.target)"
    self.key = key
    self.logger = logger
    if !key.unknownChannelArgs.isEmpty {
      let names = key.unknownChannelArgs.keys.sorted().map { "'\($0)'" }.joined(separator: ", ")
      logger.warning(
        "Ignoring channel arguments that grpc-calls does not map to any setting: \(names) (gRPC core ignores unknown arguments too); they still keep this channel apart from others"
      )
    }
    do {
      if let id = key.transport, let factory = registry.factory(for: id) {
        self.client = makeChannelClient(
          try factory.makeTransport(target: key.target.description, options: options)
        )
        self.executor = nil
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
      // One loop for all of the channel's connections: the calls' tasks run there too.
      let loop = MultiThreadedEventLoopGroup.singleton.next()
      let reporter = monitor.makeReporter()
      self.client = makeChannelClient(
        try BuiltInTransportFactory.makeTransport(
          for: key,
          on: loop,
          logger: logger,
          reporter: reporter
        )
      )
      self.reporter = reporter
      self.executor = EventLoopTaskExecutor(loop: loop)
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

  /// Starts running the channel's connections.
  func start() {
    let client = self.client
    let logger = self.logger
    self.reporter?.start()
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

  /// Closes the channel: no new RPCs; the connection closes once the RPCs on it have finished.
  func shutDown() {
    self.logger.debug("Closing an idle channel")
    self.reporter?.channelClosed()
    self.client.beginGracefulShutdown()
  }

  /// Closes the channel and its connection at once, failing the RPCs still on it.
  func close() {
    self.logger.debug("Closing a channel")
    self.reporter?.channelClosed()
    self.client.beginGracefulShutdown()
    self.runTask.withLock { $0 }?.cancel()
  }
}
