/// How the generated code looks: its access level and whether it has the async face.
public struct GeneratorOptions: Sendable, Equatable {
  /// The access level of the generated declarations.
  public enum Visibility: String, Sendable, CaseIterable {
    case `public` = "Public"
    case `package` = "Package"
    case `internal` = "Internal"

    var keyword: String { self.rawValue.lowercased() }
  }

  public var visibility: Visibility = .public
  /// Whether the async/await methods are generated beside the callback ones.
  public var async = true
  /// Modules to import besides GRPCCalls and GRPCProtoCalls: the one holding the message
  /// types, when it is not the module the generated code goes into.
  public var extraModuleImports: [String] = []

  public init(visibility: Visibility = .public, async: Bool = true, extraModuleImports: [String] = []) {
    self.visibility = visibility
    self.async = async
    self.extraModuleImports = extraModuleImports
  }

  /// Parses protoc's `--grpc-calls_opt` pairs: `Visibility=Public|Package|Internal`,
  /// `Async=true|false`, `ExtraModuleImports=Module` (repeatable).
  ///
  /// - Throws: ``GeneratorError`` naming an unknown option or value.
  public init(parameters: [(key: String, value: String)]) throws {
    for (key, value) in parameters {
      switch key {
      case "Visibility":
        guard let visibility = Visibility(rawValue: value) else {
          throw GeneratorError("Visibility must be Public, Package or Internal, not '\(value)'")
        }
        self.visibility = visibility
      case "Async":
        guard let async = Bool(value) else {
          throw GeneratorError("Async must be true or false, not '\(value)'")
        }
        self.async = async
      case "ExtraModuleImports":
        self.extraModuleImports.append(value)
      default:
        throw GeneratorError("Unknown option '\(key)'; known: Visibility, Async, ExtraModuleImports")
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
