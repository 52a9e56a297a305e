/// How the generated code looks: its access level, names, files and whether it has the async
/// face.
public struct GeneratorOptions: Sendable, Equatable {
  /// The access level of the generated declarations.
  public enum Visibility: String, Sendable, CaseIterable {
    case `public` = "Public"
    case `package` = "Package"
    case `internal` = "Internal"

    var keyword: String { self.rawValue.lowercased() }
  }

  /// Where a file's output goes, as protoc-gen-swift's option of the same name says:
  /// `foo/bar.proto` → `foo/bar.grpc-calls.swift` (FullPath), `foo_bar.grpc-calls.swift`
  /// (PathToUnderscores) or `bar.grpc-calls.swift` (DropPath).
  public enum FileNaming: String, Sendable, CaseIterable {
    case fullPath = "FullPath"
    case pathToUnderscores = "PathToUnderscores"
    case dropPath = "DropPath"
  }

  /// `internal` by default, as protoc-gen-swift's, so that both plugins' output compiles
  /// together at default options.
  public var visibility: Visibility = .internal
  /// Whether the async/await methods are generated beside the callback ones.
  public var async = true
  /// Modules to import besides GRPCCalls and GRPCProtoCalls: the one holding the message
  /// types, when it is not the module the generated code goes into.
  public var extraModuleImports: [String] = []
  /// Service types named by the service alone (`RouteGuide`) instead of the way swift-protobuf
  /// names messages (`Routeguide_RouteGuide`, honouring `swift_prefix`). Two packages with a
  /// service of the same name then collide in one module.
  public var shortServiceNames = false
  public var fileNaming: FileNaming = .fullPath
  /// Whether gRPC Objective-C's v1 methods are generated too (`<rpc>(with:handler:)`,
  /// `rpcTo<Rpc>(with:handler:)`, on GRPCLegacy), as its plugin does unless
  /// `GRPC_OBJC_NO_V1_COMPATIBILITY` is defined. The code then imports GRPCLegacy.
  public var v1Compatibility = true

  public init(
    visibility: Visibility = .internal,
    async: Bool = true,
    extraModuleImports: [String] = [],
    shortServiceNames: Bool = false,
    fileNaming: FileNaming = .fullPath,
    v1Compatibility: Bool = true
  ) {
    self.visibility = visibility
    self.async = async
    self.extraModuleImports = extraModuleImports
    self.shortServiceNames = shortServiceNames
    self.fileNaming = fileNaming
    self.v1Compatibility = v1Compatibility
  }

  /// Parses protoc's `--grpc-calls_opt` pairs: `Visibility=Public|Package|Internal`,
  /// `Async=true|false`, `ExtraModuleImports=Module` (repeatable), `ShortServiceNames=true|false`,
  /// `FileNaming=FullPath|PathToUnderscores|DropPath`, `NoV1Compatibility[=true|false]`.
  ///
  /// - Throws: ``GeneratorError`` naming an unknown option or value.
  public init(parameters: [(key: String, value: String)]) throws {
    func bool(_ key: String, _ value: String) throws -> Bool {
      guard let flag = Bool(value) else {
        throw GeneratorError("\(key) must be true or false, not '\(value)'")
      }
      return flag
    }
    for (key, value) in parameters {
      switch key {
      case "Visibility":
        guard let visibility = Visibility(rawValue: value) else {
          throw GeneratorError("Visibility must be Public, Package or Internal, not '\(value)'")
        }
        self.visibility = visibility
      case "Async":
        self.async = try bool(key, value)
      case "ExtraModuleImports":
        self.extraModuleImports.append(value)
      case "ShortServiceNames":
        self.shortServiceNames = try bool(key, value)
      case "FileNaming":
        guard let naming = FileNaming(rawValue: value) else {
          throw GeneratorError(
            "FileNaming must be FullPath, PathToUnderscores or DropPath, not '\(value)'"
          )
        }
        self.fileNaming = naming
      case "NoV1Compatibility":
        // Bare, as a flag, or with a value.
        self.v1Compatibility = value.isEmpty ? false : !(try bool(key, value))
      default:
        throw GeneratorError(
          "Unknown option '\(key)'; known: Visibility, Async, ExtraModuleImports, ShortServiceNames, FileNaming, "
            + "NoV1Compatibility"
        )
      }
    }
  }
}

/// A generator failure, reported by protoc.
public struct GeneratorError: Error, CustomStringConvertible {
  public var description: String

  public init(_ description: String) {
    self.description = description
  }
}
