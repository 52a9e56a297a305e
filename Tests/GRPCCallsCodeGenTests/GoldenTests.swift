import Foundation
import GRPCCallsCodeGen
import SwiftProtobuf
import SwiftProtobufPluginLibrary
import Testing

/// The generator's output for committed descriptor sets (scripts/generate-codegen-fixtures.sh)
/// against committed expected files. `GRPC_CALLS_UPDATE_GOLDEN=1` rewrites the expected files
/// after an intended change; review their diff.
@Suite("Code generator golden files")
struct GoldenTests {
  static let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Golden")

  struct Case: Sendable, CustomStringConvertible {
    var descriptorSet: String
    var options: GeneratorOptions
    var expected: String

    var description: String { self.expected }
  }

  static let cases: [Case] = [
    Case(
      descriptorSet: "greeter",
      options: GeneratorOptions(),
      expected: "greeter.grpc-calls.swift"
    ),
    Case(
      descriptorSet: "greeter",
      options: GeneratorOptions(
        visibility: .public,
        async: false,
        shortServiceNames: true,
        v1Compatibility: false
      ),
      expected: "greeter.public-short-no-async-no-v1.grpc-calls.swift"
    ),
    Case(
      descriptorSet: "nested_deep_keywords",
      options: GeneratorOptions(),
      expected: "nested_deep_keywords.grpc-calls.swift"
    ),
    Case(
      descriptorSet: "nopackage",
      options: GeneratorOptions(visibility: .package, extraModuleImports: ["EchoMessages"]),
      expected: "nopackage.grpc-calls.swift"
    ),
    Case(
      descriptorSet: "prefixed",
      options: GeneratorOptions(),
      expected: "prefixed.grpc-calls.swift"
    ),
    Case(
      descriptorSet: "collide_first",
      options: GeneratorOptions(),
      expected: "collide_first.grpc-calls.swift"
    ),
    Case(
      descriptorSet: "collide_second",
      options: GeneratorOptions(),
      expected: "collide_second.grpc-calls.swift"
    ),
    Case(descriptorSet: "wkt", options: GeneratorOptions(), expected: "wkt.grpc-calls.swift"),
    Case(
      descriptorSet: "wkt",
      options: GeneratorOptions(
        visibility: .public,
        extraModuleImports: ["SwiftProtobuf", "Clocks"]
      ),
      expected: "wkt.public-extra-imports.grpc-calls.swift"
    ),
  ]

  static func generate(_ testCase: Case) throws -> String {
    let data = try Data(
      contentsOf: Self.golden.appendingPathComponent("\(testCase.descriptorSet).pb")
    )
    let set = DescriptorSet(proto: try Google_Protobuf_FileDescriptorSet(serializedBytes: data))
    let file = try #require(set.files.last)
    let namer = SwiftProtobufNamer(
      currentFile: file,
      protoFileToModuleMappings: ProtoFileToModuleMappings()
    )
    return try #require(Generator(options: testCase.options).generate(file, namer: namer))
  }

  @Test("the output matches the golden file", arguments: Self.cases)
  func matches(_ testCase: Case) throws {
    let output = try Self.generate(testCase)
    let expectedURL = Self.golden.appendingPathComponent(testCase.expected)
    if ProcessInfo.processInfo.environment["GRPC_CALLS_UPDATE_GOLDEN"] == "1" {
      try output.write(to: expectedURL, atomically: true, encoding: .utf8)
    }
    let expected = try String(contentsOf: expectedURL, encoding: .utf8)
    #expect(
      output == expected,
      "regenerate with GRPC_CALLS_UPDATE_GOLDEN=1 if the change is intended"
    )
  }

  @Test("the output is valid Swift syntax (keywords escaped)", arguments: Self.cases)
  func parses(_ testCase: Case) throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "golden-\(UUID().uuidString).swift"
    )
    try Self.generate(testCase).write(to: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(at: file) }
    let swiftc = Process()
    swiftc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    swiftc.arguments = ["swiftc", "-parse", file.path]
    let errors = Pipe()
    swiftc.standardError = errors
    try swiftc.run()
    swiftc.waitUntilExit()
    let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(swiftc.terminationStatus == 0, "\(output)")
  }

  @Test("a file without services generates nothing")
  func noServices() throws {
    var proto = Google_Protobuf_FileDescriptorProto()
    proto.name = "messages.proto"
    proto.syntax = "proto3"
    let set = DescriptorSet(protos: [proto])
    let file = try #require(set.files.first)
    let namer = SwiftProtobufNamer(
      currentFile: file,
      protoFileToModuleMappings: ProtoFileToModuleMappings()
    )
    #expect(Generator().generate(file, namer: namer) == nil)
    #expect(Generator.outputName(for: file) == "messages.grpc-calls.swift")
  }

  @Test(
    "options: each parses; anything else is an error naming it; internal by default, as protoc-gen-swift"
  )
  func options() throws {
    #expect(GeneratorOptions().visibility == .internal)
    let options = try GeneratorOptions(parameters: [
      ("Visibility", "Public"), ("Async", "false"), ("ShortServiceNames", "true"),
      ("FileNaming", "DropPath"),
    ])
    #expect(
      options
        == GeneratorOptions(
          visibility: .public,
          async: false,
          shortServiceNames: true,
          fileNaming: .dropPath
        )
    )
    let imports = try GeneratorOptions(parameters: [
      ("ExtraModuleImports", "A"), ("ExtraModuleImports", "B"),
    ])
    #expect(imports.extraModuleImports == ["A", "B"])
    #expect(GeneratorOptions().v1Compatibility)
    #expect(try !GeneratorOptions(parameters: [("NoV1Compatibility", "")]).v1Compatibility)
    #expect(try !GeneratorOptions(parameters: [("NoV1Compatibility", "true")]).v1Compatibility)
    #expect(try GeneratorOptions(parameters: [("NoV1Compatibility", "false")]).v1Compatibility)
    #expect(throws: GeneratorError.self) {
      try GeneratorOptions(parameters: [("NoV1Compatibility", "maybe")])
    }
    #expect(throws: GeneratorError.self) {
      try GeneratorOptions(parameters: [("Visibility", "Secret")])
    }
    #expect(throws: GeneratorError.self) { try GeneratorOptions(parameters: [("Colour", "blue")]) }
    #expect(throws: GeneratorError.self) {
      try GeneratorOptions(parameters: [("FileNaming", "Flat")])
    }
  }

  @Test("file naming follows protoc-gen-swift's FileNaming")
  func fileNaming() throws {
    var proto = Google_Protobuf_FileDescriptorProto()
    proto.name = "a/b/c.proto"
    let file = try #require(DescriptorSet(protos: [proto]).files.first)
    #expect(Generator.outputName(for: file) == "a/b/c.grpc-calls.swift")
    #expect(Generator.outputName(for: file, naming: .pathToUnderscores) == "a_b_c.grpc-calls.swift")
    #expect(Generator.outputName(for: file, naming: .dropPath) == "c.grpc-calls.swift")
  }
}
