public import GRPCCalls
public import SwiftProtobuf

/// A protobuf service on a server: the base of generated service classes (L38).
///
/// It holds the host, the service's name and its default call options. Each call may pass its
/// own options, which replace the service's whole (as in gRPC Objective-C);
/// ``callOptions`` returns a copy to edit for that.
///
/// ```swift
/// let service = GRPCProtoService(host: "localhost:50051", packageName: "grpc.testing", serviceName: "TestService")
/// var options = service.callOptions
/// options.timeout = 2
/// let call = service.unaryCall(method: "UnaryCall", message: request, responseHandler: handler,
///                              callOptions: options, responseClass: Grpc_Testing_SimpleResponse.self)
/// call.start()
/// ```
open class GRPCProtoService: @unchecked Sendable {
  // @unchecked: every stored property is a constant of a Sendable type; subclasses made by
  // the code generator add none.

  /// The server: `name[:port]` or a target with a scheme (see `GRPCRequestOptions`).
  public let host: String
  /// The proto package; may be empty.
  public let packageName: String
  /// The service's name.
  public let serviceName: String
  /// The pool the service's calls take channels from.
  public let channelPool: GRPCChannelPool
  /// The options given at init, if any: v1 calls (GRPCLegacy) without them read the host's
  /// settings instead, as gRPC Objective-C's v1 initializer did.
  package let explicitOptions: GRPCCallOptions?
  private let defaultOptions: GRPCCallOptions

  /// Creates a service.
  ///
  /// - Parameters:
  ///   - host: The server.
  ///   - packageName: The proto package (`""` for none: paths are `/Service/Method`).
  ///   - serviceName: The service.
  ///   - callOptions: The options of calls that do not bring their own; `nil` (gRPC
  ///     Objective-C's v1 initializer) means default options, and the host's settings
  ///     (`GRPCHost`) for v1 calls.
  ///   - channelPool: The pool to take channels from; the shared pool by default.
  public init(
    host: String,
    packageName: String,
    serviceName: String,
    callOptions: GRPCCallOptions? = nil,
    channelPool: GRPCChannelPool = .shared
  ) {
    self.host = host
    self.packageName = packageName
    self.serviceName = serviceName
    self.explicitOptions = callOptions
    self.defaultOptions = callOptions ?? GRPCCallOptions()
    self.channelPool = channelPool
  }

  /// A copy of the service's default options, to edit and pass to one call.
  public var callOptions: GRPCCallOptions { self.defaultOptions }

  /// The method `name` of this service.
  public func method(_ name: String) -> GRPCProtoMethod {
    GRPCProtoMethod(package: self.packageName, service: self.serviceName, method: name)
  }

  /// Makes a unary-style call: one request; one response (or, for a server-streaming method,
  /// many) delivered to `responseHandler`. Nothing is sent until its `start()`.
  ///
  /// - Parameters:
  ///   - method: The method's name.
  ///   - message: The request.
  ///   - responseHandler: Receives the parsed responses.
  ///   - callOptions: Options replacing the service's; `nil` uses the service's.
  ///   - responseClass: The response type.
  ///   - safety: The method's safety (idempotent methods may be hedged).
  public func unaryCall<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
    method: String,
    message: Request,
    responseHandler: any GRPCProtoResponseHandler,
    callOptions: GRPCCallOptions? = nil,
    responseClass: Response.Type,
    safety: GRPCCallSafety = .default
  ) -> GRPCUnaryProtoCall {
    GRPCUnaryProtoCall(
      call: self.makeProtoCall(
        method,
        Request.self,
        Response.self,
        responseHandler,
        callOptions,
        safety
      ),
      message: message
    )
  }

  /// Makes a unary-style call whose responses go to a typed handler.
  public func unaryCall<Request: SwiftProtobuf.Message, Handler: GRPCTypedResponseHandler>(
    method: String,
    message: Request,
    responseHandler: Handler,
    callOptions: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default
  ) -> GRPCUnaryProtoCall {
    let adapter = TypedHandlerAdapter(handler: responseHandler)
    return GRPCUnaryProtoCall(
      call: self.makeCall(
        method,
        Request.self,
        Handler.Response.self,
        adapter,
        callOptions,
        safety
      ),
      message: message
    )
  }

  /// Makes a call whose requests stream: write them with
  /// ``GRPCStreamingProtoCall/writeMessage(_:)``. Nothing is sent until its `start()`.
  public func streamingCall<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
    method: String,
    requestClass: Request.Type,
    responseHandler: any GRPCProtoResponseHandler,
    callOptions: GRPCCallOptions? = nil,
    responseClass: Response.Type,
    safety: GRPCCallSafety = .default
  ) -> GRPCStreamingProtoCall<Request, Response> {
    GRPCStreamingProtoCall(
      call: self.makeProtoCall(
        method,
        Request.self,
        Response.self,
        responseHandler,
        callOptions,
        safety
      )
    )
  }

  /// Makes a call whose requests stream, with its responses going to a typed handler.
  public func streamingCall<Request: SwiftProtobuf.Message, Handler: GRPCTypedResponseHandler>(
    method: String,
    requestClass: Request.Type,
    responseHandler: Handler,
    callOptions: GRPCCallOptions? = nil,
    safety: GRPCCallSafety = .default
  ) -> GRPCStreamingProtoCall<Request, Handler.Response> {
    let adapter = TypedHandlerAdapter(handler: responseHandler)
    return GRPCStreamingProtoCall(
      call: self.makeCall(method, Request.self, Handler.Response.self, adapter, callOptions, safety)
    )
  }

  /// The raw call under a proto call: the options (the call's, or the service's) with the
  /// protobuf marshaller, so interceptors see typed messages.
  func makeCall<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
    _ method: String,
    _ request: Request.Type,
    _ response: Response.Type,
    _ handler: any GRPCResponseHandler,
    _ callOptions: GRPCCallOptions?,
    _ safety: GRPCCallSafety,
    deliveringInline: Bool = false
  ) -> GRPCCall2 {
    var options = callOptions ?? self.defaultOptions
    options.marshaller = GRPCProtobufMarshaller<Request, Response>()
    // A bad host or method name fails the call at start with the reason, as a call object is
    // what the caller expects back.
    let requestOptions = GRPCRequestOptions(
      unchecked: self.host,
      path: self.method(method).path,
      safety: safety
    )
    return GRPCCall2(
      requestOptions: requestOptions,
      responseHandler: handler,
      callOptions: options,
      channelPool: self.channelPool,
      deliveringInline: deliveringInline
    )
  }

  func makeProtoCall<Request: SwiftProtobuf.Message, Response: SwiftProtobuf.Message>(
    _ method: String,
    _ request: Request.Type,
    _ response: Response.Type,
    _ handler: any GRPCProtoResponseHandler,
    _ callOptions: GRPCCallOptions?,
    _ safety: GRPCCallSafety
  ) -> GRPCCall2 {
    self.makeCall(
      method,
      request,
      response,
      ProtoHandlerAdapter(handler: handler),
      callOptions,
      safety
    )
  }
}
