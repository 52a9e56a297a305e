import Foundation

/// `grpc-calls-config.json`: what the build plugin generates and how. Every key is optional;
/// an unknown key or value is an error naming it, so that a typo does not pass unnoticed.
struct PluginConfig {
  static let fileName = "grpc-calls-config.json"

  /// `internal`, `package` or `public`, for messages and clients alike.
  var visibility = "internal"
  /// Whether protoc-gen-swift generates the message types here; `false` when they come from
  /// another module (name it in `moduleImports`).
  var messages = true
  /// Whether the grpc-calls clients are generated.
  var clients = true
  /// Whether clients have the async/await methods beside the callback ones.
  var async = true
  /// Service types named `RouteGuide` rather than `Routeguide_RouteGuide`.
  var shortServiceNames = false
  /// Whether clients also get gRPC Objective-C's v1 methods (they need the GRPCLegacy
  /// product). Off here, unlike protoc-gen-grpc-calls' default: a package that starts from
  /// the plugin has no v1 code to port, and should not need GRPCLegacy to build.
  var v1Compatibility = false
  /// protoc-gen-swift's `FullPath`, `PathToUnderscores` or `DropPath`, for both generators.
  /// `PathToUnderscores` by default, unlike protoc's plugins: SwiftPM compiles a target's files
  /// by name, so `v1/reflection.proto` and `v1alpha/reflection.proto` need outputs named apart
  /// (`v1_reflection.pb.swift`), which `FullPath` does not give.
  var fileNaming = "PathToUnderscores"
  /// Directories, relative to the target, that imports are resolved against; the target's own
  /// directory always is.
  var importPaths: [String] = []
  /// Modules the generated clients import: the one with the message types, when `messages`
  /// is `false`.
  var moduleImports: [String] = []
  /// protoc, when it is not on the `PATH`.
  var protocPath: String?

  init() {}

  init(contentsOf url: URL) throws {
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
    guard let json = object as? [String: Any] else {
      throw PluginError("\(Self.fileName) must hold a JSON object")
    }
    func value<T>(_ key: String, _ type: T.Type) throws -> T? {
      guard let raw = json[key] else { return nil }
      guard let typed = raw as? T else {
        throw PluginError("\(Self.fileName): '\(key)' must be \(Self.describe(T.self)), not \(raw)")
      }
      return typed
    }
    let known = [
      "visibility", "messages", "clients", "async", "shortServiceNames", "v1Compatibility",
      "fileNaming",
      "importPaths", "moduleImports", "protocPath",
    ]
    if let unknown = json.keys.sorted().first(where: { !known.contains($0) }) {
      throw PluginError(
        "\(Self.fileName): unknown key '\(unknown)'; known: \(known.joined(separator: ", "))"
      )
    }
    self.visibility = try value("visibility", String.self) ?? self.visibility
    guard ["internal", "package", "public"].contains(self.visibility) else {
      throw PluginError(
        "\(Self.fileName): visibility must be internal, package or public, not '\(self.visibility)'"
      )
    }
    self.messages = try value("messages", Bool.self) ?? self.messages
    self.clients = try value("clients", Bool.self) ?? self.clients
    self.async = try value("async", Bool.self) ?? self.async
    self.shortServiceNames = try value("shortServiceNames", Bool.self) ?? self.shortServiceNames
    self.v1Compatibility = try value("v1Compatibility", Bool.self) ?? self.v1Compatibility
    self.fileNaming = try value("fileNaming", String.self) ?? self.fileNaming
    guard ["FullPath", "PathToUnderscores", "DropPath"].contains(self.fileNaming) else {
      throw PluginError(
        "\(Self.fileName): fileNaming must be FullPath, PathToUnderscores or DropPath, not '\(self.fileNaming)'"
      )
    }
    self.importPaths = try value("importPaths", [String].self) ?? self.importPaths
    self.moduleImports = try value("moduleImports", [String].self) ?? self.moduleImports
    self.protocPath = try value("protocPath", String.self)
  }

  /// Where a generator writes the file for the proto at `relative` (to its import path).
  func outputName(_ relative: String, suffix: String) -> String {
    let base = String(relative.dropLast(".proto".count))
    switch self.fileNaming {
    case "PathToUnderscores": return base.replacingOccurrences(of: "/", with: "_") + suffix
    case "DropPath": return (base.split(separator: "/").last.map(String.init) ?? base) + suffix
    default: return base + suffix
    }
  }

  private static func describe(_ type: Any.Type) -> String {
    switch type {
    case is Bool.Type: "true or false"
    case is String.Type: "a string"
    default: "a list of strings"
    }
  }
}
