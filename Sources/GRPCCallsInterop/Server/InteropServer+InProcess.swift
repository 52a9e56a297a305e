public import GRPCCalls
internal import GRPCCore
internal import GRPCInProcessTransport

extension InteropServer {
  /// A transport factory whose channels each reach a TestService of their own, in this
  /// process and with no network: register it in a `GRPCTransportRegistry` for tests that
  /// need no sockets.
  ///
  /// Each channel gets a fresh in-process transport pair and a server on its server side; the
  /// server runs for as long as the process does (it is meant for tests).
  ///
  /// - Parameter recorder: Records what every in-process server saw.
  public static func inProcessTransportFactory(
    recorder: InteropServerRecorder = InteropServerRecorder()
  ) -> GRPCClosureTransportFactory {
    GRPCClosureTransportFactory { _, _ in
      let transport = InProcessTransport()
      let server = GRPCServer(
        transport: transport.server,
        services: [InteropTestService(recorder: recorder), recorder.health]
      )
      Task { try? await server.serve() }
      return transport.client
    }
  }
}
