internal import Foundation
internal import GRPCCalls
internal import GRPCCallsInterop
internal import GRPCCallsTestSupport

/// What a fault scenario acts on: the proxy the calls go through, and the server behind it (in
/// this process, or in a child process that can be killed), with a spare to take over.
final class FaultEnvironment: Sendable {
  let proxy: FaultProxy
  private let servers: LockedValue<Servers>

  private struct Servers: @unchecked Sendable {
    // `ServerProcess` wraps a `Process`; it is only touched under this mutex.
    var inProcess: InteropServer?
    var child: ServerProcess?
    var spare: InteropServer?
    var childPort: Int?
  }

  private init(proxy: FaultProxy, servers: Servers) {
    self.proxy = proxy
    self.servers = LockedValue(servers)
  }

  /// Starts the server (in a child process when `childProcess`) and a proxy in front of it.
  static func start(childProcess: Bool) async throws -> FaultEnvironment {
    var servers = Servers()
    let port: Int
    if childProcess {
      let child = try ServerProcess(port: 0, compression: false)
      servers.child = child
      servers.childPort = child.port
      port = child.port
    } else {
      let server = try await InteropServer.start(host: "127.0.0.1", port: 0, compression: false)
      servers.inProcess = server
      port = server.port
    }
    return FaultEnvironment(proxy: try FaultProxy(upstreamPort: port), servers: servers)
  }

  /// Kills the child server with SIGKILL: no GOAWAY, the kernel resets its connections.
  func killServer() async throws {
    let child = self.servers.withLock { servers in
      defer { servers.child = nil }
      return servers.child
    }
    child?.kill()
  }

  /// Starts the child server again on the port it had.
  func restartServer() async throws {
    guard let port = self.servers.withLock({ $0.childPort }) else { return }
    let child = try ServerProcess(port: port, compression: false)
    self.servers.withLock { $0.child = child }
  }

  /// Points the proxy at a new server and shuts the old one down gracefully: GOAWAY, calls in
  /// flight finish, new calls take a new connection to the new server.
  func replaceServerGracefully() async throws {
    let spare = try await InteropServer.start(host: "127.0.0.1", port: 0, compression: false)
    self.proxy.redirect(toPort: spare.port)
    let old = self.servers.withLock { servers in
      defer {
        servers.spare = servers.inProcess
        servers.inProcess = spare
      }
      return servers.inProcess
    }
    old?.stop()
  }

  func stop() async {
    self.proxy.close()
    let servers = self.servers.withLock { $0 }
    servers.child?.stop()
    await servers.inProcess?.stopAndWait()
    await servers.spare?.stopAndWait()
  }
}
