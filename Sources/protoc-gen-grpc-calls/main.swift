import GRPCCallsCodeGen
import SwiftProtobufPluginLibrary

/// protoc's plugin: `protoc --grpc-calls_out=DIR [--grpc-calls_opt=Visibility=Public,Async=false]`.
struct GRPCCallsProtocPlugin: CodeGenerator {
  var version: String? { "0.1.0" }
  var projectURL: String? { nil }
  var supportedFeatures: [Google_Protobuf_Compiler_CodeGeneratorResponse.Feature] {
    [.proto3Optional]
  }

  func generate(
    files: [FileDescriptor],
    parameter: any CodeGeneratorParameter,
    protoCompilerContext: any ProtoCompilerContext,
    generatorOutputs: any GeneratorOutputs
  ) throws {
    let options = try GeneratorOptions(parameters: parameter.parsedPairs)
    let generator = Generator(options: options)
    let mappings = ProtoFileToModuleMappings()
    for file in files {
      let namer = SwiftProtobufNamer(currentFile: file, protoFileToModuleMappings: mappings)
      if let source = generator.generate(file, namer: namer, mappings: mappings) {
        try generatorOutputs.add(
          fileName: Generator.outputName(for: file, naming: options.fileNaming),
          contents: source
        )
      }
    }
  }
}

GRPCCallsProtocPlugin().main(nil)
