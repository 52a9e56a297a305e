internal import GRPCCore
internal import GRPCNIOTransportHTTP2Posix
internal import Synchronization

/// One channel of the pool: a `GRPCClient` on an HTTP/2 transport to one target, with the
/// settings of one ``ChannelKey``.
///
/// The core's client queues RPCs until its connections run, so calls may use the channel as
/// soon as it exists; ``start()`` runs the connections in a task of their own.
final class GRPCChannel: Sendable {
  let key: ChannelKey
  let client: GRPCClient<HTTP2ClientTransport.Posix>
  private let runTask = Mutex<Task<Void, Never>?>(nil)

  init(key: ChannelKey) throws(GRPCError) {
    self.key = key
    do {
      let transport = try HTTP2ClientTransport.Posix(
        target: key.target.resolvableTarget,
        transportSecurity: key.transportSecurity,
        config: key.transportConfig
      )
      self.client = GRPCClient(transport: transport)
    } catch {
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
    let task = Task<Void, Never> {
      // Errors here are connection-level; each RPC reports its own failure to its caller.
      try? await client.runConnections()
    }
    self.runTask.withLock { $0 = task }
  }

  /// Closes the channel: no new RPCs; the connection closes once the RPCs on it have finished.
  func shutDown() {
    self.client.beginGracefulShutdown()
  }

  /// Closes the channel and its connection at once, failing the RPCs still on it.
  func close() {
    self.client.beginGracefulShutdown()
    self.runTask.withLock { $0 }?.cancel()
  }
}
