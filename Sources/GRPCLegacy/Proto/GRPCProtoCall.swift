public import GRPCCalls
public import GRPCProtoCalls
public import SwiftProtobuf

/// gRPC Objective-C's v1 proto call (`GRPCProtoCall`, née `ProtoRPC`): a ``GRPCCall`` that
/// sends the protobuf messages its requests writer produces and hands its writeable the
/// responses parsed as `responseClass`.
///
/// Generated v1 methods (`rpcTo<Method>(with:handler:)`) make these; ``start()`` starts one
/// with the writeable it was made with.
///
/// ```swift
/// let call = service.rpcToUnaryCall(with: request) { response, error in … }
/// call.requestHeaders.addString("value", forKey: "x-key")
/// call.start()
/// ```
public final class GRPCProtoCall: GRPCCall, @unchecked Sendable {
  // @unchecked: the only added mutable state is behind its lock.

  /// The type responses are parsed as.
  public let responseClass: any SwiftProtobuf.Message.Type
  /// The writeable given at init, until ``start()`` hands it over.
  private let pendingWriteable: LockedValue<(any GRXWriteable)?>

  /// Creates a call of `method` on `host`; nothing is sent until ``start()``.
  ///
  /// - Parameters:
  ///   - host: The server: `name[:port]` or a target with a scheme.
  ///   - method: The method.
  ///   - requestsWriter: The request messages; started when the call starts.
  ///   - responseClass: The response type.
  ///   - responsesWriteable: Gets each parsed response, then the end.
  ///   - callOptions: The call's options; `nil` uses the host's settings (`GRPCHost`).
  ///   - callSafety: The method's safety.
  ///   - channelPool: The pool to take the channel from.
  public init(
    host: String,
    method: GRPCProtoMethod,
    requestsWriter: GRXWriter,
    responseClass: any SwiftProtobuf.Message.Type,
    responsesWriteable: any GRXWriteable,
    callOptions: GRPCCallOptions? = nil,
    callSafety: GRPCCallSafety = .default,
    channelPool: GRPCChannelPool = .shared
  ) {
    self.responseClass = responseClass
    self.pendingWriteable = LockedValue(responsesWriteable)
    super.init(
      host: host,
      path: method.path,
      callSafety: callSafety,
      requestsWriter: requestsWriter,
      callOptions: callOptions,
      channelPool: channelPool,
      protobuf: V1ProtobufMarshaller(responseClass: responseClass)
    )
  }

  /// Starts the call with the writeable it was made with; a second call does nothing.
  public func start() {
    guard let writeable = self.pendingWriteable.withLock({ $0.take() }) else { return }
    self.start(with: writeable)
  }
}

extension GRPCProtoService {
  /// gRPC Objective-C's v1 `RPCToMethod:requestsWriter:responseClass:responsesWriteable:`: a
  /// call of this service's `method`, not yet started. Generated v1 methods call it.
  ///
  /// The call runs with the options the service was made with, or, when it was made without
  /// (`init(host:packageName:serviceName:)`), with the host's settings (`GRPCHost`).
  public func rpc(
    toMethod method: String,
    requestsWriter: GRXWriter,
    responseClass: any SwiftProtobuf.Message.Type,
    responsesWriteable: any GRXWriteable
  ) -> GRPCProtoCall {
    GRPCProtoCall(
      host: self.host,
      method: self.method(method),
      requestsWriter: requestsWriter,
      responseClass: responseClass,
      responsesWriteable: responsesWriteable,
      callOptions: self.explicitOptions,
      channelPool: self.channelPool
    )
  }
}
