import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

/// Call objects and interceptor chains are freed after their close.
@Suite("Lifetimes")
struct LifetimeTests {
  @Test(
    "an interceptor that overrides didClose without calling super does not keep its chain alive"
  )
  func interceptorWithoutSuper() async throws {
    try await withTestServer { server in
      let made = WeakBox()
      let options = made.options(server.options) { ClosingWithoutSuper(manager: $0) }
      do {
        let (call, recorder) = try server.call("UnaryCall", options: options)
        made.setCall(call)
        call.start()
        call.writeData(try Grpc_Testing_SimpleRequest().bytes)
        call.finish()
        #expect(await recorder.waitForClose()?.error == nil)
      }
      let freed = await eventually { made.allNil ? true : nil }
      #expect(freed == true, "still alive: \(made.alive)")
    }
  }

  @Test("a call that is never started is freed, with its interceptor")
  func neverStarted() async throws {
    try await withTestServer { server in
      let made = WeakBox()
      let options = made.options(server.options) { GRPCInterceptor(manager: $0) }
      do {
        let (call, _) = try server.call("UnaryCall", options: options)
        made.setCall(call)
      }
      let freed = await eventually { made.allNil ? true : nil }
      #expect(freed == true, "still alive: \(made.alive)")
    }
  }

  @Test("a started call the caller let go of runs to its close, then is freed")
  func startedAndReleased() async throws {
    try await withTestServer { server in
      let made = WeakBox()
      let recorder = CallRecorder()
      do {
        let (call, _) = try server.call("UnaryCall", recorder: recorder)
        made.setCall(call)
        call.writeData(try Grpc_Testing_SimpleRequest().bytes)
        call.finish()
        call.start()
      }
      #expect(await recorder.waitForClose()?.error == nil)
      let freed = await eventually { made.allNil ? true : nil }
      #expect(freed == true)
    }
  }
}

/// Overrides didClose and forwards the close itself, never calling super or shutDown().
final class ClosingWithoutSuper: GRPCInterceptor, @unchecked Sendable {
  // @unchecked: no state of its own.
  override func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.manager.forwardPreviousInterceptorClose(trailingMetadata: trailingMetadata, error: error)
  }
}

/// Weak references to what one call made.
final class WeakBox: Sendable {
  private struct Refs {
    weak var call: GRPCCall2?
    weak var interceptor: GRPCInterceptor?
    weak var manager: GRPCInterceptorManager?
  }

  private let refs = LockedValue(Refs())

  func setCall(_ call: GRPCCall2) {
    self.refs.withLock { $0.call = call }
  }

  func set(interceptor: GRPCInterceptor, manager: GRPCInterceptorManager) {
    self.refs.withLock {
      $0.interceptor = interceptor
      $0.manager = manager
    }
  }

  /// `options` with one interceptor, made by `make`, that this box keeps weak references to.
  func options(
    _ options: GRPCCallOptions,
    _ make: @escaping @Sendable (GRPCInterceptorManager) -> GRPCInterceptor
  ) -> GRPCCallOptions {
    var options = options
    options.interceptorFactories = [
      GRPCClosureInterceptorFactory { manager in
        let interceptor = make(manager)
        self.set(interceptor: interceptor, manager: manager)
        return interceptor
      }
    ]
    return options
  }

  var allNil: Bool {
    self.refs.withLock { $0.call == nil && $0.interceptor == nil && $0.manager == nil }
  }

  var alive: [String] {
    self.refs.withLock { refs in
      [
        refs.call.map { _ in "call" }, refs.interceptor.map { _ in "interceptor" },
        refs.manager.map { _ in "manager" },
      ]
      .compactMap { $0 }
    }
  }
}
