// Compiled by scripts/check-compiles.sh against the package's built modules. As written it
// must compile; each `// FAIL:` line, swapped in for the line above it, must not.
import Dispatch
import GRPCCallsInterop
import GRPCLegacy
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
  let handler = GRPCResponseCallbacks<Grpc_Testing_StreamingOutputCallResponse>(queue: queue) { _ in
  } onClose: { _, _ in
  }
  _ = client.fullDuplexCall(responseHandler: handler)
  // FAIL: _ = client.streamingInputCall(responseHandler: handler)
}

// v1 methods (GRPCLegacy): the handler's response type is the method's.
func typedV1Handler(_ client: TestService) {
  client.unaryCall(with: Grpc_Testing_SimpleRequest()) {
    (response: Grpc_Testing_SimpleResponse?, _) in _ = response
  }
  // FAIL: client.unaryCall(with: Grpc_Testing_SimpleRequest()) { (response: Grpc_Testing_Empty?, _) in _ = response }
}

func typedV1Request(_ client: TestService) {
  client.emptyCall(with: Grpc_Testing_Empty()) { _, _ in }
  // FAIL: client.emptyCall(with: Grpc_Testing_SimpleRequest()) { _, _ in }
}
