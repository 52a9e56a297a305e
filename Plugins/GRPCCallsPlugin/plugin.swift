import Foundation
import PackagePlugin

/// Generates grpc-calls clients for the `.proto` files of a target at build time.
///
/// Add the plugin to a target and put `.proto` files in its sources. Each file's services
/// become a `<name>.grpc-calls.swift` compiled into the target. Message types come from
/// elsewhere (swift-protobuf's own plugin, or committed `protoc-gen-swift` output); name their
/// module in `grpc-calls-config.json` when it is another one:
///
/// ```json
/// { "visibility": "internal", "async": true, "extraModuleImports": ["MyMessages"],
///   "importPaths": ["protos"] }
/// ```
///
/// protoc comes from `PROTOC_PATH`, or `protoc` on the `PATH`.
@main
struct GRPCCallsPlugin: BuildToolPlugin {
  struct Config: Decodable {
    var visibility: String?
    var async: Bool?
    var extraModuleImports: [String]?
    /// Directories, relative to the target, that imports are resolved against; the target's
    /// own directory always is.
    var importPaths: [String]?
  }

  struct PluginError: Error, CustomStringConvertible {
    var description: String
  }

  func createBuildCommands(context: PluginContext, target: any Target) async throws -> [Command] {
    guard let sourceTarget = target as? SourceModuleTarget else { return [] }
    let root = sourceTarget.directoryURL
    let protos = sourceTarget.sourceFiles(withSuffix: "proto").map(\.url)
    guard !protos.isEmpty else { return [] }

    let configURL = root.appendingPathComponent("grpc-calls-config.json")
    let config = FileManager.default.fileExists(atPath: configURL.path)
      ? try JSONDecoder().decode(Config.self, from: Data(contentsOf: configURL))
      : Config()
    let protoc = try Self.protoc()
    let generator = try context.tool(named: "protoc-gen-grpc-calls").url
    let output = context.pluginWorkDirectoryURL

    var options = ["Visibility=\((config.visibility ?? "internal").capitalized)"]
    if let async = config.async { options.append("Async=\(async)") }
    for module in config.extraModuleImports ?? [] { options.append("ExtraModuleImports=\(module)") }
    let includes = [root] + (config.importPaths ?? []).map { root.appendingPathComponent($0) }

    return protos.map { proto in
      let relative = String(proto.path.dropFirst(root.path.count + 1))
      let generated = output.appendingPathComponent(
        String(relative.dropLast(".proto".count)) + ".grpc-calls.swift"
      )
      var arguments = ["--plugin=protoc-gen-grpc-calls=\(generator.path)", "--grpc-calls_out=\(output.path)"]
      arguments += options.map { "--grpc-calls_opt=\($0)" }
      arguments += includes.map { "--proto_path=\($0.path)" }
      arguments.append(proto.path)
      return .buildCommand(
        displayName: "Generating grpc-calls client for \(relative)",
        executable: protoc,
        arguments: arguments,
        inputFiles: [proto, generator] + (FileManager.default.fileExists(atPath: configURL.path) ? [configURL] : []),
        outputFiles: [generated]
      )
    }
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
    throw PluginError(description: "protoc not found: install it (apt-get install protobuf-compiler) or set PROTOC_PATH")
  }
}
