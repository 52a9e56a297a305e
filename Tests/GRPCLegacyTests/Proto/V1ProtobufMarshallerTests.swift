import Foundation
import GRPCCallsInterop
import GRPCCore
import SwiftProtobuf
import Testing

@testable import GRPCLegacy

@Suite("v1 protobuf marshaller")
struct V1ProtobufMarshallerTests {
  let marshaller = V1ProtobufMarshaller(responseClass: Grpc_Testing_SimpleResponse.self)

  @Test("bytes parsed in place give the response class's message, as Data does")
  func inPlaceMatchesData() throws {
    var response = Grpc_Testing_SimpleResponse()
    response.payload.body = Data(repeating: 7, count: 1000)
    let bytes = try response.serializedData()
    let inPlace = try self.marshaller.deserialize(contiguousBytes: [UInt8](bytes))
    #expect(inPlace as? Grpc_Testing_SimpleResponse == response)
    #expect(try self.marshaller.deserialize(bytes) as? Grpc_Testing_SimpleResponse == response)
  }

  @Test("bytes that do not parse throw swift-protobuf's error either way")
  func failuresMatch() {
    let bytes: [UInt8] = [0x08] + [UInt8](repeating: 0xFF, count: 10)
    #expect(throws: BinaryDecodingError.self) {
      try self.marshaller.deserialize(contiguousBytes: bytes)
    }
    #expect(throws: BinaryDecodingError.self) {
      try self.marshaller.deserialize(Data(bytes))
    }
  }
}
