public import Foundation
public import GRPCCallsInterop
public import SwiftProtobuf

/// Requests to the interop TestService that tests build again and again.
public enum InteropRequests {
  /// Response parameters asking for `size` bytes of payload.
  public static func parameters(size: Int32) -> Grpc_Testing_ResponseParameters {
    var parameters = Grpc_Testing_ResponseParameters()
    parameters.size = size
    return parameters
  }

  /// A StreamingOutputCall request for `count` messages of `size` bytes.
  public static func stream(count: Int, size: Int32) -> Grpc_Testing_StreamingOutputCallRequest {
    var request = Grpc_Testing_StreamingOutputCallRequest()
    request.responseParameters = Array(repeating: Self.parameters(size: size), count: count)
    return request
  }

  /// A StreamingOutputCall request for 5 minutes of small responses, one every 10 ms: only a
  /// cancel (or a deadline) ends its stream, however busy the machine.
  public static func longStream() -> Grpc_Testing_StreamingOutputCallRequest {
    var request = Self.stream(count: 30_000, size: 10)
    for index in request.responseParameters.indices {
      request.responseParameters[index].intervalUs = 10_000
    }
    return request
  }

  /// A UnaryCall request whose response message is exactly `responseBytes` long on the wire.
  public static func unary(responseBytes: Int) throws -> Grpc_Testing_SimpleRequest {
    var request = Grpc_Testing_SimpleRequest()
    // The payload's framing takes at most a dozen bytes: find the body size that lands exactly.
    for body in max(0, responseBytes - 12) ... responseBytes {
      var response = Grpc_Testing_SimpleResponse()
      response.payload.body = Data(count: body)
      if try response.serializedData().count == responseBytes {
        request.responseSize = Int32(body)
        return request
      }
    }
    throw InteropCaseFailure("no body size gives \(responseBytes) bytes")
  }
}

/// The documented bounds of flow control that tests assert, at a 1 MiB window (the Flow
/// control article of GRPCCalls).
public enum FlowControlBounds {
  /// How far ahead of a reader with no demand a server may send on one stream, in bytes on the
  /// wire (``FaultProxy/serverBytes``): the window, what the client's transport reads ahead
  /// (about two windows more) and frame headers; 8 windows leave room for scheduling.
  ///
  /// What a grpc-swift-2 server's writer has *written* is no bound: it learns that the stream
  /// stopped being writable only after a hop to the event loop and buffers what it writes
  /// meanwhile, 2–27 MiB of a 128 MiB stream on a lightly loaded machine and, once, the whole
  /// stream with `.ci/run` and a test loop beside it. Those bytes stay in the server.
  public static func wireLead(window: Int) -> Int {
    8 * window
  }

  /// How much a client reading nothing may grow, stream data only (its own process).
  /// Measured 12–13 MiB.
  public static let clientGrowth = 24 << 20

  /// How much a client holding `streams` flow-controlled streams with no demand may grow (its
  /// own process): per stream two windows read ahead by the transport, one undelivered message
  /// and 48 KiB for the call itself (1,000 calls with nothing to read: 39 MiB), plus 32 MiB for
  /// the connection and allocator.
  public static func manyStreamsClientGrowth(streams: Int, window: Int, messageSize: Int) -> Int {
    streams * (2 * window + messageSize + (48 << 10)) + (32 << 20)
  }
}

extension SwiftProtobuf.Message {
  /// The serialized message.
  public var bytes: Data { get throws { try self.serializedData() } }
}

/// A UnaryCall request whose response is exactly `responseBytes` long on the wire.
public func unaryRequest(responseBytes: Int) throws -> Grpc_Testing_SimpleRequest {
  try InteropRequests.unary(responseBytes: responseBytes)
}
