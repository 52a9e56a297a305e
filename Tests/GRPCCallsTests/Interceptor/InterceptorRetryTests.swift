import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import SwiftProtobuf
import Testing

@Suite("Interceptor retries over loopback")
struct InterceptorRetryTests {
  @Test(
    "an interceptor retries downstream: 2 failed attempts, the 3rd succeeds",
    arguments: [3, 2]
  )
  func retry(maxAttempts: Int) async throws {
    try await withTestServer { server in
      let id = UUID().uuidString
      var options = server.options
      options.initialMetadata.addString("2/\(id)", forKey: InteropServerRecorder.failAttemptsKey)
      let made = LockedValue<[RetryingInterceptor]>([])
      options.interceptorFactories = [
        GRPCClosureInterceptorFactory { manager in
          let interceptor = RetryingInterceptor(manager: manager, maxAttempts: maxAttempts)
          made.withLock { $0.append(interceptor) }
          return interceptor
        },
        GRPCClosureInterceptorFactory { GRPCInterceptor(manager: $0) },
      ]
      let (_, recorder, close) = try await server.complete(
        "UnaryCall",
        try unaryRequest(responseBytes: 50),
        options: options
      )
      #expect(server.recorder.attempts(id) == maxAttempts)
      #expect(recorder.closeCount == 1)
      if maxAttempts == 3 {
        #expect(close.error == nil)
        #expect(recorder.messages.map(\.count) == [50])
        #expect(recorder.initialMetadata != nil)
      } else {
        #expect(close.error?.code == .unavailable)
        #expect(close.error?.message == "attempt 2 fails on purpose")
        #expect(recorder.messages.isEmpty)
      }
      #expect(made.withLock { $0.count } == 1)
    }
  }
}
