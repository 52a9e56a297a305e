internal import Dispatch
internal import Foundation
internal import GRPCCalls
internal import GRPCCore
internal import SwiftProtobuf

extension InteropClient {
  /// The `cacheable_unary` case: two identical requests to `CacheableUnaryCall` (whose server
  /// answers with the time and `cache-control: max-age=60`) get the same answer, and a different
  /// request gets another.
  ///
  /// The interop descriptions put a caching proxy between client and server; grpc-calls has a
  /// client-side cache instead, so the case passes only when ``callOptions`` include one
  /// (`GRPCResponseCacheInterceptorFactory`, which `grpc-calls interop --use_cache` installs).
  public func cacheableUnary() async throws {
    let stamp = String(DispatchTime.now().uptimeNanoseconds)
    let first = try await self.cacheableCall(payload: stamp)
    let second = try await self.cacheableCall(payload: stamp)
    try self.check(
      first == second,
      "two identical cacheable requests got different answers (\(first) and \(second)): no response cache answered the second"
    )
    let other = try await self.cacheableCall(payload: stamp + "-other")
    try self.check(other != first, "a different request got the cached answer \(first)")
  }

  /// One `CacheableUnaryCall` marked cacheable, with the case's `x-user-ip`; returns the
  /// response's payload text.
  private func cacheableCall(payload: String) async throws -> String {
    var options = self.callOptions
    options.initialMetadata.addString("1.2.3.4", forKey: "x-user-ip")
    let (call, recorder) = try self.makeCall(
      "CacheableUnaryCall",
      options: options,
      safety: .cacheable
    )
    var request = Grpc_Testing_SimpleRequest()
    request.responseType = .compressable
    request.payload.body = Data(payload.utf8)
    call.start()
    call.writeData(try request.serializedData())
    call.finish()
    try await self.expectClose(recorder, code: nil)
    guard let bytes = recorder.messages.first, recorder.messages.count == 1 else {
      throw InteropCaseFailure("expected one response message, got \(recorder.messages.count)")
    }
    let response = try Grpc_Testing_SimpleResponse(serializedBytes: bytes)
    return String(decoding: response.payload.body, as: UTF8.self)
  }
}
