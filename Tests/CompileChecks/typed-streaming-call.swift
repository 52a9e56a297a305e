// Compiled by scripts/check-compiles.sh against the package's built modules. As written it
// must compile; each `// FAIL:` line, swapped in for the line above it, must not.
import Dispatch
import GRPCCallsInterop
import GRPCProtoCalls

func typedStreamingCall(
  _ client: TestService,
  handler: GRPCResponseCallbacks<Grpc_Testing_StreamingInputCallResponse>
) {
  let call = client.streamingInputCall(responseHandler: handler)
  call.writeMessage(Grpc_Testing_StreamingInputCallRequest())
  // FAIL: call.writeMessage(Grpc_Testing_SimpleRequest())
}

func typedHandler(_ client: TestService, queue: DispatchQueue) {
  let handler = GRPCResponseCallbacks<Grpc_Testing_StreamingOutputCallResponse>(queue: queue) { _ in } onClose: { _, _ in }
  _ = client.fullDuplexCall(responseHandler: handler)
  // FAIL: _ = client.streamingInputCall(responseHandler: handler)
}
