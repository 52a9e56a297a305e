import Foundation
import PackagePlugin

/// Generates message types and grpc-calls clients for the `.proto` files of a target at build
/// time: swift-protobuf's `protoc-gen-swift` writes `<name>.pb.swift`, this package's
/// `protoc-gen-grpc-calls` writes `<name>.grpc-calls.swift`.
///
/// Add the plugin to a target, put `.proto` files in its sources and, optionally, a
/// `grpc-calls-config.json` beside them (every key is optional; these are the defaults):
///
/// ```json
/// {
///   "visibility": "internal",
///   "messages": true,
///   "clients": true,
///   "async": true,
///   "shortServiceNames": false,
///   "v1Compatibility": false,
///   "fileNaming": "PathToUnderscores",
///   "importPaths": [],
///   "moduleImports": [],
///   "protocPath": null
/// }
/// ```
///
/// protoc comes from `protocPath`, `PROTOC_PATH`, or `protoc` on the `PATH`.
@main
struct GRPCCallsPlugin: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
    guard let sourceTarget = target as? SourceModuleTarget else { return [] }
    let root = sourceTarget.directoryURL
    let protos = sourceTarget.sourceFiles(withSuffix: "proto").map(\.url)
    guard !protos.isEmpty else { return [] }

    let configURL = root.appendingPathComponent(PluginConfig.fileName)
    let hasConfig = FileManager.default.fileExists(atPath: configURL.path)
    let config = hasConfig ? try PluginConfig(contentsOf: configURL) : PluginConfig()
    let protoc = try config.protocPath.map { URL(fileURLWithPath: $0) } ?? Self.protoc()
    let output = context.pluginWorkDirectoryURL
    let includes = [root] + config.importPaths.map { root.appendingPathComponent($0) }
    let configInputs = hasConfig ? [configURL] : []

    var generators: [Generator] = []
    if config.messages {
      generators.append(
        Generator(
          name: "swift",
          tool: try context.tool(named: "protoc-gen-swift").url,
          options: [
            "Visibility=\(config.visibility.capitalized)", "FileNaming=\(config.fileNaming)",
          ],
          suffix: ".pb.swift",
          label: "Swift messages",
          setting: "\"messages\": false",
          onlyWithServices: false
        )
      )
    }
    if config.clients {
      var options = [
        "Visibility=\(config.visibility.capitalized)", "Async=\(config.async)",
        "ShortServiceNames=\(config.shortServiceNames)", "FileNaming=\(config.fileNaming)",
        "NoV1Compatibility=\(!config.v1Compatibility)",
      ]
      options += config.moduleImports.map { "ExtraModuleImports=\($0)" }
      generators.append(
        Generator(
          name: "grpc-calls",
          tool: try context.tool(named: "protoc-gen-grpc-calls").url,
          options: options,
          suffix: ".grpc-calls.swift",
          label: "grpc-calls client",
          setting: "\"clients\": false",
          onlyWithServices: true
        )
      )
    }

    var outputs: [OutputCheck.Output] = []
    var commands: [Command] = []
    for generator in generators {
      for proto in protos {
        let relative = String(proto.path.dropFirst(root.path.count + 1))
        if generator.onlyWithServices,
          !ProtoScan.declaresService(try String(contentsOf: proto, encoding: .utf8))
        {
          continue
        }
        let name = config.outputName(relative, suffix: generator.suffix)
        outputs.append(
          OutputCheck.Output(
            proto: relative,
            path: name,
            suffix: generator.suffix,
            setting: generator.setting
          )
        )
        var arguments = ["--plugin=protoc-gen-\(generator.name)=\(generator.tool.path)"]
        arguments.append("--\(generator.name)_out=\(output.path)")
        arguments += generator.options.map { "--\(generator.name)_opt=\($0)" }
        arguments += includes.map { "--proto_path=\($0.path)" }
        arguments.append(proto.path)
        commands.append(
          .buildCommand(
            displayName: "Generating \(generator.label) for \(relative)",
            executable: protoc,
            arguments: arguments,
            inputFiles: [proto, generator.tool] + configInputs,
            outputFiles: [output.appendingPathComponent(name)]
          )
        )
      }
    }
    let existing = sourceTarget.sourceFiles(withSuffix: "swift").map {
      String($0.url.path.dropFirst(root.path.count + 1))
    }
    try OutputCheck.check(outputs, existing: existing)
    return commands
  }

  /// One protoc plugin and what it writes.
  struct Generator {
    var name: String
    var tool: URL
    var options: [String]
    var suffix: String
    var label: String
    /// The configuration that turns it off, for error messages.
    var setting: String
    /// Whether it writes a file only for a `.proto` that declares a service.
    var onlyWithServices: Bool
  }

  private static func protoc() throws -> URL {
    let environment = ProcessInfo.processInfo.environment
    if let path = environment["PROTOC_PATH"] {
      return URL(fileURLWithPath: path)
    }
    for directory in (environment["PATH"] ?? "").split(separator: ":") {
      let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent("protoc")
      if FileManager.default.isExecutableFile(atPath: candidate.path) {
        return candidate
      }
    }
    throw PluginError(
      "protoc not found: install it (apt-get install protobuf-compiler, brew install protobuf), "
        + "or set protocPath in \(PluginConfig.fileName) or PROTOC_PATH"
    )
  }
}

struct PluginError: Error, CustomStringConvertible {
  var description: String

  init(_ description: String) {
    self.description = description
  }
}
