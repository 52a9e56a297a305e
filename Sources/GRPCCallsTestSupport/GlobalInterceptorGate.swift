/// Keeps the library's tests that register global interceptors apart from those that must not
/// meet one: a global interceptor joins every call in the process, the other suites' included.
package actor GlobalInterceptorGate {
  private static let shared = GlobalInterceptorGate()
  private var held = false
  private var waiting: [CheckedContinuation<Void, Never>] = []

  /// Runs `body` while no other holder of the gate runs.
  package static func exclusive<T: Sendable>(_ body: () async throws -> T) async throws -> T {
    await Self.shared.acquire()
    do {
      let result = try await body()
      await Self.shared.release()
      return result
    } catch {
      await Self.shared.release()
      throw error
    }
  }

  /// `withTestServer`, holding the gate.
  package static func withTestServer(
    _ body: (TestServer) async throws -> Void
  ) async throws {
    try await Self.exclusive {
      try await GRPCCallsTestSupport.withTestServer(body)
    }
  }

  private func acquire() async {
    guard self.held else {
      self.held = true
      return
    }
    await withCheckedContinuation { self.waiting.append($0) }
  }

  private func release() {
    if self.waiting.isEmpty {
      self.held = false
    } else {
      // The gate passes to the next holder without being let go.
      self.waiting.removeFirst().resume()
    }
  }
}
