public import Dispatch
internal import GRPCCore

extension GRPCChannelPool {
  /// The connectivity state of the channel that calls to `host` with `options` use.
  ///
  /// - Parameters:
  ///   - host: A call's host (``GRPCRequestOptions/host``).
  ///   - options: A call's options; only their channel-level options matter.
  ///   - connect: Whether to connect if the channel is ``GRPCConnectivityState/idle``, as
  ///     ``connect(host:options:)`` does; the state returned is that before connecting.
  /// - Throws: ``GRPCError`` with INVALID_ARGUMENT for options that cannot open a channel,
  ///   UNIMPLEMENTED for a registered transport (``GRPCCallOptions/transport``), whose
  ///   connections the pool does not see.
  public func state(
    host: String,
    options: GRPCCallOptions = GRPCCallOptions(),
    connect: Bool = false
  ) throws(GRPCError) -> GRPCConnectivityState {
    let key = try self.observableKey(host: host, options: options)
    let state = self.state.withLock { state in
      state.existingMonitor(for: key)?.current ?? (state.isShutDown ? .shutdown : .idle)
    }
    if connect, state == .idle {
      try self.connect(key: key, options: options)
    }
    return state
  }

  /// Opens the channel that calls to `host` with `options` use and connects it, ahead of the
  /// first call; it closes after ``Config/idleTimeout`` with no call, as any channel does.
  ///
  /// - Throws: ``GRPCError`` as ``state(host:options:connect:)`` does, and UNAVAILABLE after
  ///   ``shutDown()``.
  public func connect(
    host: String,
    options: GRPCCallOptions = GRPCCallOptions()
  ) throws(GRPCError) {
    try self.connect(key: self.observableKey(host: host, options: options), options: options)
  }

  /// The connectivity states of the channel that calls to `host` with `options` use: the
  /// current one first, then each change, in order. The sequence finishes after
  /// ``GRPCConnectivityState/shutdown``, or when the task iterating it is cancelled.
  ///
  /// - Throws: ``GRPCError`` as ``state(host:options:connect:)`` does.
  public func stateChanges(
    host: String,
    options: GRPCCallOptions = GRPCCallOptions()
  ) throws(GRPCError) -> AsyncStream<GRPCConnectivityState> {
    let (stream, continuation) = AsyncStream.makeStream(of: GRPCConnectivityState.self)
    let removal = try self.addObserver(.stream(continuation), host: host, options: options)
    // Only now: adding the observer to a monitor already shut down finishes the stream within
    // the pool's lock, which the termination handler takes.
    continuation.onTermination = { _ in removal.remove() }
    return stream
  }

  /// Tells `handler`, on `queue`, the connectivity state of the channel that calls to `host`
  /// with `options` use: the current one first, then each change, in order (on a serial
  /// queue), until ``GRPCConnectivityState/shutdown`` or
  /// ``GRPCConnectivityObservation/cancel()``, or until the observation returned is released.
  ///
  /// - Throws: ``GRPCError`` as ``state(host:options:connect:)`` does.
  public func observeState(
    host: String,
    options: GRPCCallOptions = GRPCCallOptions(),
    queue: DispatchQueue,
    handler: @escaping @Sendable (GRPCConnectivityState) -> Void
  ) throws(GRPCError) -> GRPCConnectivityObservation {
    let removal = try self.addObserver(.callback(queue, handler), host: host, options: options)
    return GRPCConnectivityObservation(removal: removal)
  }

  /// Adds `observer` to the monitor of the key of `host` and `options`, made if there is none,
  /// within the pool's lock, so that the monitor cannot be dropped before it has its observer.
  private func addObserver(
    _ observer: ConnectivityMonitor.Observer,
    host: String,
    options: GRPCCallOptions
  ) throws(GRPCError) -> ObserverRemoval {
    let key = try self.observableKey(host: host, options: options)
    let (monitor, id) = self.state.withLock { state in
      let monitor = state.monitor(for: key)
      return (monitor, monitor.addObserver(observer))
    }
    return ObserverRemoval(pool: self, key: key, monitor: monitor, id: id)
  }

  /// How an observer goes: its monitor stops telling it, and the pool forgets the monitor once
  /// no channel or other observer uses it, so observing many targets leaves nothing behind.
  struct ObserverRemoval: Sendable {
    fileprivate weak var pool: GRPCChannelPool?
    fileprivate let key: ChannelKey
    fileprivate let monitor: ConnectivityMonitor
    fileprivate let id: Int

    func remove() {
      self.monitor.removeObserver(self.id)
      self.pool?.state.withLock { $0.dropMonitorIfUnused(self.key) }
    }
  }

  /// The channel key of `host` and `options`, if its connections can be observed.
  private func observableKey(
    host: String,
    options: GRPCCallOptions
  ) throws(GRPCError) -> ChannelKey {
    let key = try self.key(host: host, options: options)
    if let id = key.transport, self.config.transportRegistry.factory(for: id) != nil {
      throw GRPCError(
        code: .unimplemented,
        message:
          "The connectivity state of a registered transport ('\(id)') is not known to grpc-calls; use the transport's own, or the built-in transports (GRPCCallOptions.transportType)"
      )
    }
    return key
  }

  /// Opens the channel of `key` and lets it go idle; replaces a channel that connected and went
  /// idle, since the transport connects such a channel again only for a call.
  private func connect(key: ChannelKey, options: GRPCCallOptions) throws(GRPCError) {
    let dormant = self.state.withLock { state -> GRPCChannel? in
      guard let (channel, activeCalls) = state.channel(for: key), activeCalls == 0,
        state.existingMonitor(for: key)?.isDormant == true, state.remove(channel)
      else { return nil }
      return channel
    }
    dormant?.shutDown()
    try self.lease(for: key, options: options).release()
  }
}

/// An observer of a channel's connectivity state
/// (``GRPCChannelPool/observeState(host:options:queue:handler:)``); it stays until cancelled or
/// released, or until the pool shuts down.
public final class GRPCConnectivityObservation: Sendable {
  private let removal: GRPCChannelPool.ObserverRemoval

  init(removal: GRPCChannelPool.ObserverRemoval) {
    self.removal = removal
  }

  /// Stops telling the handler of changes; one already on its queue still runs. An observation
  /// is also cancelled when it is released: keep it for as long as the handler should run.
  public func cancel() {
    self.removal.remove()
  }

  deinit {
    self.cancel()
  }
}
