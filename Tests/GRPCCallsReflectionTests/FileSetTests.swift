import Foundation
import GRPCCalls
import GRPCCore
import SwiftProtobuf
import Testing

@testable import GRPCCallsReflection

@Suite("Reflection: the files of a conversation")
struct FileSetTests {
  static func file(_ name: String, imports: [String] = []) -> Google_Protobuf_FileDescriptorProto {
    var file = Google_Protobuf_FileDescriptorProto()
    file.name = name
    file.dependency = imports
    return file
  }

  /// A `FileDescriptorResponse` holding `files`.
  static func answer(_ files: Google_Protobuf_FileDescriptorProto...) throws -> ReflectionResponse {
    var response = ReflectionResponse()
    var descriptors = Grpc_Reflection_V1_FileDescriptorResponse()
    descriptors.fileDescriptorProto = try files.map { try $0.serializedBytes() }
    response.fileDescriptorResponse = descriptors
    return response
  }

  @Test("dependencies are asked for one at a time and come out before the files that import them")
  func dependenciesFirst() throws {
    var files = FileSet()
    try files.add(Self.answer(Self.file("app.proto", imports: ["types.proto", "common.proto"])))
    #expect(files.missingDependency == "types.proto")
    try files.add(
      Self.answer(Self.file("types.proto", imports: ["common.proto"])),
      expecting: "types.proto"
    )
    #expect(files.missingDependency == "common.proto")
    try files.add(Self.answer(Self.file("common.proto")), expecting: "common.proto")
    #expect(files.missingDependency == nil)
    #expect(files.dependenciesFirst.map(\.name) == ["common.proto", "types.proto", "app.proto"])
  }

  @Test("an import cycle ends: each file once")
  func cycle() throws {
    var files = FileSet()
    try files.add(
      Self.answer(
        Self.file("a.proto", imports: ["b.proto"]),
        Self.file("b.proto", imports: ["a.proto"])
      )
    )
    #expect(files.missingDependency == nil)
    #expect(Set(files.dependenciesFirst.map(\.name)) == ["a.proto", "b.proto"])
    #expect(files.count == 2)
  }

  @Test("a dependency the server does not have is left out, and not asked for again")
  func unavailable() throws {
    var files = FileSet()
    try files.add(Self.answer(Self.file("app.proto", imports: ["gone.proto"])))
    #expect(files.missingDependency == "gone.proto")
    files.markUnavailable("gone.proto")
    #expect(files.missingDependency == nil)
    #expect(files.dependenciesFirst.map(\.name) == ["app.proto"])
  }

  @Test(
    "an answer without the file asked for, or that is not file descriptors, or that does not decode: INTERNAL"
  )
  func badAnswers() throws {
    var files = FileSet()
    #expect(throws: GRPCError.self) {
      try files.add(Self.answer(Self.file("other.proto")), expecting: "wanted.proto")
    }
    var listing = ReflectionResponse()
    listing.listServicesResponse = Grpc_Reflection_V1_ListServiceResponse()
    #expect(throws: GRPCError.self) { try files.add(listing) }
    var garbage = ReflectionResponse()
    var descriptors = Grpc_Reflection_V1_FileDescriptorResponse()
    descriptors.fileDescriptorProto = [Data([0xFF, 0xFF, 0xFF])]
    garbage.fileDescriptorResponse = descriptors
    #expect { try files.add(garbage) } throws: { ($0 as? GRPCError)?.code == .internalError }
  }
}
