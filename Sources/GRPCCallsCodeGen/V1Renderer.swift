/// Renders gRPC Objective-C's v1 surface of a service (GRPCLegacy): the `<Service>Protocol`
/// protocol and the service class's conformance, in the shape Swift imports the Objective-C
/// plugin's methods with (`unaryCall(with:handler:)`, `rpcToUnaryCall(with:handler:)`,
/// `streamingInputCall(withRequestsWriter:handler:)`, …).
struct V1Renderer {
  let service: ServiceModel
  let access: String

  func render(into out: inout CodeWriter) {
    out.line(
      "/// gRPC Objective-C's v1 methods (GRPCLegacy): each starts a `GRPCProtoCall` at once, or"
    )
    out.line("/// returns it unstarted (`rpcTo…`) to set its request headers first.")
    out.line("\(self.access) protocol \(self.service.v1ProtocolName): Sendable {")
    out.indented { out in
      for (index, method) in self.service.methods.enumerated() {
        if index > 0 { out.blankLine() }
        out.comments(method.comments)
        out.line("func \(self.startingSignature(method))")
        out.blankLine()
        out.comments(method.comments)
        out.line("func \(self.callSignature(method))")
      }
    }
    out.line("}")
    out.blankLine()
    out.line("extension \(self.service.className): \(self.service.v1ProtocolName) {")
    out.indented { out in
      for (index, method) in self.service.methods.enumerated() {
        if index > 0 { out.blankLine() }
        self.renderMethods(method, into: &out)
      }
    }
    out.line("}")
  }

  private func renderMethods(_ method: ServiceModel.Method, into out: inout CodeWriter) {
    let (input, inputArgument) = self.input(method)
    let (handler, _) = self.handler(method)
    out.comments(method.comments)
    out.line("\(self.access) func \(self.startingSignature(method)) {")
    out.indented { out in
      out.line(
        "self.\(method.v1CallName)(\(inputArgument): \(input.name), \(handler): \(handler)).start()"
      )
    }
    out.line("}")
    out.blankLine()
    out.comments(method.comments)
    out.line("\(self.access) func \(self.callSignature(method)) {")
    out.indented { out in
      out.line("self.rpc(")
      out.indented { out in
        out.line("toMethod: \(SwiftNames.literal(method.protoName)),")
        out.line(
          "requestsWriter: \(method.clientStreaming ? input.name : "GRXWriter(value: \(input.name))"),"
        )
        out.line("responseClass: \(method.responseType).self,")
        let factory = method.serverStreaming ? "eventHandler" : "unaryHandler"
        out.line("responsesWriteable: GRXHandlerWriteable.\(factory)(\(handler))")
      }
      out.line(")")
    }
    out.line("}")
  }

  /// `unaryCall(with request: Request, handler: …)`.
  private func startingSignature(_ method: ServiceModel.Method) -> String {
    "\(method.swiftName)(\(self.parameters(method)))"
  }

  /// `rpcToUnaryCall(with request: Request, handler: …) -> GRPCProtoCall`.
  private func callSignature(_ method: ServiceModel.Method) -> String {
    "\(method.v1CallName)(\(self.parameters(method))) -> GRPCProtoCall"
  }

  private func parameters(_ method: ServiceModel.Method) -> String {
    let (input, inputArgument) = self.input(method)
    let (handler, handlerType) = self.handler(method)
    return
      "\(inputArgument) \(input.name): \(input.type), \(handler): @escaping @Sendable \(handlerType)"
  }

  /// The request parameter: a message, or a writer of them when the client streams.
  private func input(
    _ method: ServiceModel.Method
  ) -> (argument: (name: String, type: String), label: String) {
    method.clientStreaming
      ? ((name: "requestsWriter", type: "GRXWriter"), "withRequestsWriter")
      : ((name: "request", type: method.requestType), "with")
  }

  /// The handler parameter: one response or an error, or events when the server streams.
  private func handler(_ method: ServiceModel.Method) -> (name: String, type: String) {
    method.serverStreaming
      ? (
        "eventHandler",
        "(_ done: Bool, _ response: \(method.responseType)?, _ error: GRPCError?) -> Void"
      )
      : ("handler", "(_ response: \(method.responseType)?, _ error: GRPCError?) -> Void")
  }
}
