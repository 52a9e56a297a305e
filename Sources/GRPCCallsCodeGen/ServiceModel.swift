internal import Foundation
public import SwiftProtobufPluginLibrary

/// What the generator needs of a service: names, Swift types and comments, free of descriptors.
public struct ServiceModel: Sendable, Equatable {
  /// The Swift name of the service class, backticked when it is a keyword.
  public var className: String { SwiftNames.quoted(self.typeName) }
  /// The generated protocol (L38's `<Service>2`).
  public var protocolName: String { self.typeName + "2" }
  /// The v1 protocol: gRPC Objective-C's `<Service>`, named as Swift imports an Objective-C
  /// protocol that shares its name with a class.
  public var v1ProtocolName: String { self.typeName + "Protocol" }

  public struct Method: Sendable, Equatable {
    /// The name in the proto, e.g. `UnaryCall`: used on the wire.
    public var protoName: String
    /// The Swift function name, e.g. `unaryCall` (backticked when it is a keyword).
    public var swiftName: String
    public var requestType: String
    public var responseType: String
    public var clientStreaming: Bool
    public var serverStreaming: Bool
    /// The proto comments as `///` lines, or empty.
    public var comments: String
    /// The async function of a unary-response method that also returns the headers and
    /// trailers: `unaryCallResponse`, or `unaryCallWithMetadata` when the service has a method
    /// of that name already.
    public var metadataFunctionName: String

    /// The v1 method that returns the call unstarted, e.g. `rpcToUnaryCall`.
    public var v1CallName: String { "rpcTo" + NamingUtils.toUpperCamelCase(self.protoName) }
  }

  /// The proto package, possibly empty.
  public var package: String
  /// The name in the proto, e.g. `TestService`.
  public var protoName: String
  /// The service's type name, unquoted: the service's name in UpperCamelCase after the file's
  /// type prefix, as swift-protobuf names messages (`Grpc_Testing_TestService`, or the
  /// `swift_prefix` option's prefix), or without the prefix when short names are asked for.
  public var typeName: String
  public var comments: String
  public var methods: [Method]

  /// The model of `service`, with message types named as SwiftProtobuf names them.
  public init(_ service: ServiceDescriptor, namer: SwiftProtobufNamer, shortName: Bool = false) {
    self.package = service.file.package
    self.protoName = service.name
    let prefix = shortName ? "" : namer.typePrefix(forFile: service.file)
    self.typeName =
      prefix.isEmpty
      ? SwiftNames.typeBaseName(service.name) : prefix + NamingUtils.toUpperCamelCase(service.name)
    self.comments = service.protoSourceComments()
    let names = Set(service.methods.map { NamingUtils.toLowerCamelCase($0.name) })
    self.methods = service.methods.map { method in
      let name = NamingUtils.toLowerCamelCase(method.name)
      return Method(
        protoName: method.name,
        swiftName: SwiftNames.functionName(method.name),
        requestType: namer.fullName(message: method.inputType),
        responseType: namer.fullName(message: method.outputType),
        clientStreaming: method.clientStreaming,
        serverStreaming: method.serverStreaming,
        comments: method.protoSourceComments(),
        metadataFunctionName: names.contains(name + "Response")
          ? name + "WithMetadata" : name + "Response"
      )
    }
  }
}

/// Swift spellings of proto names.
enum SwiftNames {
  /// `UnaryCall` → `unaryCall`; a keyword is backticked.
  static func functionName(_ protoName: String) -> String {
    Self.quoted(NamingUtils.toLowerCamelCase(protoName))
  }

  /// A type name: the proto name in UpperCamelCase (`Type`, `Protocol`, `Self` and `Any`
  /// cannot be type names even with backticks, so they get a `Service` suffix).
  static func typeBaseName(_ protoName: String) -> String {
    let name = NamingUtils.toUpperCamelCase(protoName)
    return ["Type", "Protocol", "Self", "Any"].contains(name) ? name + "Service" : name
  }

  /// `text` as a Swift string literal.
  static func literal(_ text: String) -> String {
    "\"\(text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\""))\""
  }

  static func quoted(_ name: String) -> String {
    Self.keywords.contains(name) ? "`\(name)`" : name
  }

  /// Swift keywords that cannot be used as identifiers without backticks.
  static let keywords: Set<String> = [
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import",
    "init", "inout", "internal", "let", "open", "operator", "private", "precedencegroup",
    "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias", "var",
    "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough",
    "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where", "while", "as",
    "false", "is", "nil", "self", "super", "throws", "true", "try", "await", "async", "any",
    "package", "consume", "borrowing", "consuming", "some",
  ]
}
