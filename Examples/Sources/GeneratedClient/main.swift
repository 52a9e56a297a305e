import Foundation
import GRPCCalls
import GRPCCallsTestSupport
import GRPCLegacy
import GRPCProtoCalls

// The server: the interop TestService, in this process, on a free port.
let server = try await InteropServer.start(host: "127.0.0.1", port: 0)
var options = GRPCCallOptions()
options.transportType = .insecure
// `TestService` here is the class the build plugin generated from echo.proto.
let service = TestService(host: server.target, callOptions: options)

var request = Grpc_Testing_SimpleRequest()
request.responseSize = 1024
let response = try await service.unaryCall(request)
print("unary: \(response.payload.body.count) bytes")

// gRPC Objective-C's v1 method ("v1Compatibility": true in grpc-calls-config.json).
let v1Size = await withCheckedContinuation { continuation in
  service.unaryCall(with: request) { response, error in
    continuation.resume(returning: response?.payload.body.count ?? -1)
  }
}
print("v1 unary: \(v1Size) bytes")

var streamRequest = Grpc_Testing_StreamingOutputCallRequest()
streamRequest.responseParameters = [10, 20, 30].map { size in
  var parameters = Grpc_Testing_ResponseParameters()
  parameters.size = Int32(size)
  return parameters
}
let sizes = try await service.streamingOutputCall(streamRequest) { responses in
  var sizes: [Int] = []
  for try await response in responses { sizes.append(response.payload.body.count) }
  return sizes
}
print("server streaming: \(sizes)")

let echoed = try await service.fullDuplexCall { writer in
  try await writer.write(streamRequest)
} body: { responses in
  var count = 0
  for try await _ in responses { count += 1 }
  return count
}
print("bidirectional: \(echoed) responses")

await server.stopAndWait()
guard response.payload.body.count == 1024, v1Size == 1024, sizes == [10, 20, 30], echoed == 3 else {
  print("FAILED: unexpected responses")
  exit(1)
}
print("generated client: ok")
