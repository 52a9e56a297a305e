internal import Foundation

/// Renders a ``ServiceModel`` as Swift: the `<Service>2` protocol, the `<Service>` class on
/// `GRPCProtoService`, and the async face (L38's generated shape, in Swift).
struct ServiceRenderer {
  let service: ServiceModel
  let options: GeneratorOptions

  private var access: String { self.options.visibility.keyword }

  func render(into out: inout CodeWriter) {
    self.renderProtocol(into: &out)
    out.blankLine()
    self.renderClass(into: &out)
    out.blankLine()
    self.renderUntyped(into: &out)
    if self.options.v1Compatibility {
      out.blankLine()
      V1Renderer(service: self.service, access: self.access).render(into: &out)
    }
    if self.options.async {
      out.blankLine()
      self.renderAsync(into: &out)
    }
  }

  private func renderProtocol(into out: inout CodeWriter) {
    out.comments(self.service.comments)
    out.line("\(self.access) protocol \(self.service.protocolName): Sendable {")
    out.indented { out in
      for (index, method) in self.service.methods.enumerated() {
        if index > 0 { out.blankLine() }
        out.comments(method.comments)
        out.line("func \(self.callbackSignature(method, handler: .typed, defaults: false))")
      }
    }
    out.line("}")
  }

  private func renderClass(into out: inout CodeWriter) {
    out.comments(self.service.comments)
    out.line(
      "\(self.access) final class \(self.service.className): GRPCProtoService, \(self.service.protocolName), @unchecked Sendable {"
    )
    out.indented { out in
      out.line("// @unchecked: GRPCProtoService holds only constants, and this class adds none.")
      out.blankLine()
      out.line(
        "/// A client of `\(self.fullServiceName)` on `host`; calls without options of their own use"
      )
      out.line(
        "/// `callOptions` (or, for v1 calls, the host's `GRPCHost` settings when it is `nil`)."
      )
      out.line("\(self.access) init(")
      out.indented { out in
        out.line("host: String,")
        out.line("callOptions: GRPCCallOptions? = nil,")
        out.line("channelPool: GRPCChannelPool = .shared")
      }
      out.line(") {")
      out.indented { out in
        out.line("super.init(")
        out.indented { out in
          out.line("host: host,")
          out.line("packageName: \(self.literal(self.service.package)),")
          out.line("serviceName: \(self.literal(self.service.protoName)),")
          out.line("callOptions: callOptions,")
          out.line("channelPool: channelPool")
        }
        out.line(")")
      }
      out.line("}")
      for method in self.service.methods {
        out.blankLine()
        out.comments(method.comments)
        self.renderCallbackMethod(method, handler: .typed, into: &out)
      }
    }
    out.line("}")
  }

  /// The methods with gRPC Objective-C's untyped handler, for code ported from it.
  private func renderUntyped(into out: inout CodeWriter) {
    out.line(
      "// Untyped handlers (GRPCProtoResponseHandler), as gRPC Objective-C's generated methods take."
    )
    out.line("extension \(self.service.className) {")
    out.indented { out in
      for (index, method) in self.service.methods.enumerated() {
        if index > 0 { out.blankLine() }
        out.comments(method.comments)
        self.renderCallbackMethod(method, handler: .untyped, into: &out)
      }
    }
    out.line("}")
  }

  private func renderCallbackMethod(
    _ method: ServiceModel.Method,
    handler: Handler,
    into out: inout CodeWriter
  ) {
    out.line(
      "\(self.access) func \(self.callbackSignature(method, handler: handler, defaults: true)) {"
    )
    out.indented { out in
      if method.clientStreaming {
        out.line("self.streamingCall(")
        out.indented { out in
          out.line("method: \(self.literal(method.protoName)),")
          out.line("requestClass: \(method.requestType).self,")
        }
      } else {
        out.line("self.unaryCall(")
        out.indented { out in
          out.line("method: \(self.literal(method.protoName)),")
          out.line("message: message,")
        }
      }
      out.indented { out in
        out.line("responseHandler: responseHandler,")
        switch handler {
        case .typed:
          out.line("callOptions: callOptions")
        case .untyped:
          out.line("callOptions: callOptions,")
          out.line("responseClass: \(method.responseType).self")
        }
      }
      out.line(")")
    }
    out.line("}")
  }

  private func renderAsync(into out: inout CodeWriter) {
    out.line("// async/await: each call is flow controlled; cancelling the task cancels the RPC.")
    out.line("extension \(self.service.className) {")
    out.indented { out in
      for (index, method) in self.service.methods.enumerated() {
        if index > 0 { out.blankLine() }
        out.comments(method.comments)
        self.renderAsyncMethod(method, into: &out)
        if !method.serverStreaming {
          out.blankLine()
          self.renderAsyncMetadataMethod(method, into: &out)
        }
      }
    }
    out.line("}")
  }

  private func renderAsyncMethod(_ method: ServiceModel.Method, into out: inout CodeWriter) {
    let name = method.swiftName
    let request = method.requestType
    let response = method.responseType
    let stream = "GRPCResponseStream<\(response)>"
    let writer = "GRPCRequestWriter<\(request)>"
    switch (method.clientStreaming, method.serverStreaming) {
    case (false, false):
      out.line("\(self.access) func \(name)(")
      out.indented { out in
        out.line("_ request: \(request),")
        out.line("callOptions: GRPCCallOptions? = nil")
      }
      out.line(") async throws -> \(response) {")
      self.call(
        into: &out,
        "unary",
        method,
        ["request: request", "responseType: \(response).self"]
      )
    case (false, true):
      out.line("\(self.access) func \(name)<Result: Sendable>(")
      out.indented { out in
        out.line("_ request: \(request),")
        out.line("callOptions: GRPCCallOptions? = nil,")
        out.line("body: (\(stream)) async throws -> Result")
      }
      out.line(") async throws -> Result {")
      self.call(
        into: &out,
        "serverStreaming",
        method,
        ["request: request", "responseType: \(response).self"],
        trailing: "body: body"
      )
    case (true, false):
      out.line("\(self.access) func \(name)(")
      out.indented { out in
        out.line("callOptions: GRPCCallOptions? = nil,")
        out.line("requests: (\(writer)) async throws -> Void")
      }
      out.line(") async throws -> \(response) {")
      self.call(
        into: &out,
        "clientStreaming",
        method,
        ["requestType: \(request).self", "responseType: \(response).self"],
        trailing: "requests: requests"
      )
    case (true, true):
      out.line("\(self.access) func \(name)<Result: Sendable>(")
      out.indented { out in
        out.line("callOptions: GRPCCallOptions? = nil,")
        out.line("requests: @escaping @Sendable (\(writer)) async throws -> Void,")
        out.line("body: (\(stream)) async throws -> Result")
      }
      out.line(") async throws -> Result {")
      self.call(
        into: &out,
        "bidirectionalStreaming",
        method,
        ["requestType: \(request).self", "responseType: \(response).self"],
        trailing: "requests: requests,\nbody: body"
      )
    }
    out.line("}")
  }

  /// The unary-response method that returns the response with its headers and trailers (a
  /// streamed response has them on its `GRPCResponseStream`).
  private func renderAsyncMetadataMethod(_ method: ServiceModel.Method, into out: inout CodeWriter)
  {
    let request = method.requestType
    let response = method.responseType
    let plain = method.swiftName.replacingOccurrences(of: "`", with: "")
    out.line("/// `\(plain)` that also returns the response headers and trailers.")
    out.line("\(self.access) func \(method.metadataFunctionName)(")
    out.indented { out in
      if method.clientStreaming {
        out.line("callOptions: GRPCCallOptions? = nil,")
        out.line("requests: (GRPCRequestWriter<\(request)>) async throws -> Void")
      } else {
        out.line("_ request: \(request),")
        out.line("callOptions: GRPCCallOptions? = nil")
      }
    }
    out.line(") async throws -> GRPCResponse<\(response)> {")
    if method.clientStreaming {
      self.call(
        into: &out,
        "clientStreamingResponse",
        method,
        ["requestType: \(request).self", "responseType: \(response).self"],
        trailing: "requests: requests"
      )
    } else {
      self.call(
        into: &out,
        "unaryResponse",
        method,
        ["request: request", "responseType: \(response).self"]
      )
    }
    out.line("}")
  }

  /// `try await self.<function>(method: "...", <arguments>, callOptions: callOptions, <trailing>)`.
  private func call(
    into out: inout CodeWriter,
    _ function: String,
    _ method: ServiceModel.Method,
    _ arguments: [String],
    trailing: String? = nil
  ) {
    out.indented { out in
      out.line("try await self.\(function)(")
      out.indented { out in
        out.line("method: \(self.literal(method.protoName)),")
        for argument in arguments {
          out.line("\(argument),")
        }
        out.line("callOptions: callOptions\(trailing == nil ? "" : ",")")
        if let trailing {
          for part in trailing.split(separator: "\n") {
            out.line(String(part))
          }
        }
      }
      out.line(")")
    }
  }

  /// The response handler a callback method takes.
  private enum Handler {
    /// `some GRPCTypedResponseHandler<Response>`: another response type does not compile.
    case typed
    /// `any GRPCProtoResponseHandler`, gRPC Objective-C's.
    case untyped
  }

  /// The callback method's signature, after `func`.
  private func callbackSignature(
    _ method: ServiceModel.Method,
    handler: Handler,
    defaults: Bool
  ) -> String {
    let options = "callOptions: GRPCCallOptions?\(defaults ? " = nil" : "")"
    let handlerType =
      switch handler {
      case .typed: "some GRPCTypedResponseHandler<\(method.responseType)>"
      case .untyped: "any GRPCProtoResponseHandler"
      }
    if method.clientStreaming {
      return "\(method.swiftName)(responseHandler: \(handlerType), \(options)) "
        + "-> GRPCStreamingProtoCall<\(method.requestType), \(method.responseType)>"
    }
    return
      "\(method.swiftName)(message: \(method.requestType), responseHandler: \(handlerType), \(options)) -> GRPCUnaryProtoCall"
  }

  private var fullServiceName: String {
    self.service.package.isEmpty
      ? self.service.protoName : "\(self.service.package).\(self.service.protoName)"
  }

  private func literal(_ text: String) -> String {
    SwiftNames.literal(text)
  }
}
