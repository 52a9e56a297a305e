import Dispatch
import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import Testing

@Suite("Closure-based response handler")
struct CallbackResponseHandlerTests {
  @Test("an unlabeled trailing closure receives the messages; onClose the close")
  func trailingClosureShape() async throws {
    try await withTestServer { server in
      let seen = LockedValue<(messages: [Data], headers: Int, closes: [GRPCError?])>(([], 0, []))
      let handler = GRPCCallbackResponseHandler(queue: DispatchQueue(label: "callbacks")) { data in
        seen.withLock { $0.messages.append(data as? Data ?? Data()) }
      } onClose: { _, error in
        seen.withLock { $0.closes.append(error) }
      } onInitialMetadata: { _ in
        seen.withLock { $0.headers += 1 }
      }
      var request = Grpc_Testing_StreamingOutputCallRequest()
      request.responseParameters = [
        InteropRequests.parameters(size: 3), InteropRequests.parameters(size: 4),
      ]
      let call = GRPCCall2(
        requestOptions: try GRPCRequestOptions(
          host: server.server.target,
          path: "/grpc.testing.TestService/StreamingOutputCall"
        ),
        responseHandler: handler,
        callOptions: server.options,
        channelPool: server.pool
      )
      call.start()
      call.writeData(try request.bytes)
      call.finish()
      _ = await CloseWait.poll { seen.withLock { !$0.closes.isEmpty } }
      let result = seen.withLock { $0 }
      #expect(result.messages.count == 2)
      #expect(result.headers == 1)
      #expect(result.closes.count == 1)
      #expect(result.closes.first.flatMap { $0 } == nil)
    }
  }
}
