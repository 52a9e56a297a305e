import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCore
import GRPCProtoCalls
import SwiftProtobuf
import Testing

@Suite("Protobuf marshaller")
struct ProtobufMarshallerTests {
  typealias Marshaller = GRPCProtobufMarshaller<
    Grpc_Testing_SimpleRequest, Grpc_Testing_SimpleResponse
  >

  @Test("bytes parsed in place give the message that Data gives")
  func inPlaceMatchesData() throws {
    var response = Grpc_Testing_SimpleResponse()
    response.payload.body = Data((0 ..< 70_000).map { UInt8(truncatingIfNeeded: $0) })
    response.username = "someone"
    let bytes = try response.serializedData()
    let fromData = try Marshaller().deserialize(bytes)
    let inPlace = try Marshaller().deserialize(contiguousBytes: [UInt8](bytes))
    #expect(fromData as? Grpc_Testing_SimpleResponse == response)
    #expect(inPlace as? Grpc_Testing_SimpleResponse == response)
  }

  @Test("bytes that do not parse throw swift-protobuf's error either way")
  func failuresMatch() {
    // Field 1 as a varint of ten 0xFF bytes: too long for any varint.
    let bytes: [UInt8] = [0x08] + [UInt8](repeating: 0xFF, count: 10)
    #expect(throws: BinaryDecodingError.self) {
      try Marshaller().deserialize(Data(bytes))
    }
    #expect(throws: BinaryDecodingError.self) {
      try Marshaller().deserialize(contiguousBytes: bytes)
    }
  }

  @Test("a marshaller without an in-place parser is given the bytes as Data")
  func defaultCopies() throws {
    struct Counting: GRPCMarshaller {
      func serialize(_ message: any Sendable) throws -> Data { Data() }
      func deserialize(_ data: Data) throws -> any Sendable { data.count }
    }
    #expect(
      try Counting().deserialize(contiguousBytes: [UInt8](repeating: 1, count: 5)) as? Int == 5
    )
  }
}
