public import SwiftProtobuf

/// Definitions from the file descriptors a reflection server sent, printed as grpcurl prints
/// them: proto syntax, fully qualified type names (`.grpc.testing.Empty`), elements in
/// canonical order (methods and nested types by name, fields and enum values by number).
/// `grpc-calls describe` prints with it.
///
/// ```swift
/// let files = try await reflection.fileDescriptors(containingSymbol: "grpc.testing.SimpleRequest")
/// print(GRPCProtoText(files: files).describe("grpc.testing.SimpleRequest") ?? "not defined")
/// ```
public struct GRPCProtoText: Sendable {
  /// The files to look in: those of ``GRPCReflectionClient/fileDescriptors(containingSymbol:callOptions:)``.
  public let files: [Google_Protobuf_FileDescriptorProto]

  /// Looks in `files`.
  public init(files: [Google_Protobuf_FileDescriptorProto]) {
    self.files = files
  }

  /// A definition found by its fully qualified name.
  enum Definition {
    case service(Google_Protobuf_ServiceDescriptorProto)
    case method(Google_Protobuf_MethodDescriptorProto)
    /// A message, with its fully qualified name (map fields name their entry type by it).
    case message(Google_Protobuf_DescriptorProto, fullName: String)
    case enumeration(Google_Protobuf_EnumDescriptorProto)
  }

  /// `symbol` without the leading dot a fully qualified proto name may have.
  public static func bare(_ symbol: String) -> String {
    symbol.hasPrefix(".") ? String(symbol.dropFirst()) : symbol
  }

  /// The definition named `symbol` (`grpc.testing.TestService`, `….UnaryCall`, a message or an
  /// enum, nested ones included), if a file defines it, and whether that file is proto2.
  func find(_ symbol: String) -> (definition: Definition, proto2: Bool)? {
    let wanted = Self.bare(symbol)
    for file in self.files {
      let package = file.package
      let proto2 = file.syntax.isEmpty || file.syntax == "proto2"
      for service in file.service {
        let name = Self.join(package, service.name)
        if name == wanted { return (.service(service), proto2) }
        if let method = service.method.first(where: { Self.join(name, $0.name) == wanted }) {
          return (.method(method), proto2)
        }
      }
      if let found = Self.find(wanted, in: file.messageType, file.enumType, scope: package) {
        return (found, proto2)
      }
    }
    return nil
  }

  private static func find(
    _ wanted: String,
    in messages: [Google_Protobuf_DescriptorProto],
    _ enums: [Google_Protobuf_EnumDescriptorProto],
    scope: String
  ) -> Definition? {
    if let enumeration = enums.first(where: { Self.join(scope, $0.name) == wanted }) {
      return .enumeration(enumeration)
    }
    for message in messages {
      let name = Self.join(scope, message.name)
      if name == wanted { return .message(message, fullName: name) }
      if let found = Self.find(wanted, in: message.nestedType, message.enumType, scope: name) {
        return found
      }
    }
    return nil
  }

  private static func join(_ scope: String, _ name: String) -> String {
    scope.isEmpty ? name : "\(scope).\(name)"
  }

  /// `<name> is a service:` (or method, message, enum) and its definition, as `grpcurl
  /// describe` prints it; `nil` when no file defines `symbol`.
  public func describe(_ symbol: String) -> String? {
    guard let (definition, proto2) = self.find(symbol) else { return nil }
    let name = Self.bare(symbol)
    var out = Lines()
    switch definition {
    case .service(let service):
      out.add("\(name) is a service:")
      Self.print(service, into: &out)
    case .method(let method):
      out.add("\(name) is a method:")
      out.add(Self.rpc(method))
    case .message(let message, let fullName):
      out.add("\(name) is a message:")
      Self.print(message, fullName: fullName, proto2: proto2, into: &out)
    case .enumeration(let enumeration):
      out.add("\(name) is an enum:")
      Self.print(enumeration, into: &out)
    }
    return out.text
  }

  /// The fully qualified names of `service`'s methods (`grpc.testing.TestService.EmptyCall`),
  /// sorted; `nil` when no file defines such a service.
  public func methods(of service: String) -> [String]? {
    guard case .service(let definition)? = self.find(service)?.definition else { return nil }
    return definition.method.map { Self.join(Self.bare(service), $0.name) }.sorted()
  }

  // MARK: Printing

  struct Lines {
    private(set) var lines: [String] = []
    var depth = 0

    mutating func add(_ line: String) {
      self.lines.append(String(repeating: "  ", count: self.depth) + line)
    }

    var text: String { self.lines.joined(separator: "\n") }
  }

  static func rpc(_ method: Google_Protobuf_MethodDescriptorProto) -> String {
    let input = (method.clientStreaming ? "stream " : "") + method.inputType
    let output = (method.serverStreaming ? "stream " : "") + method.outputType
    return "rpc \(method.name) ( \(input) ) returns ( \(output) );"
  }

  private static func print(
    _ service: Google_Protobuf_ServiceDescriptorProto,
    into out: inout Lines
  ) {
    out.add("service \(service.name) {")
    out.depth += 1
    for method in service.method.sorted(by: { $0.name < $1.name }) { out.add(Self.rpc(method)) }
    out.depth -= 1
    out.add("}")
  }

  private static func print(
    _ enumeration: Google_Protobuf_EnumDescriptorProto,
    into out: inout Lines
  ) {
    out.add("enum \(enumeration.name) {")
    out.depth += 1
    for value in enumeration.value.sorted(by: { $0.number < $1.number }) {
      out.add("\(value.name) = \(value.number);")
    }
    out.depth -= 1
    out.add("}")
  }

  private static func print(
    _ message: Google_Protobuf_DescriptorProto,
    fullName: String,
    proto2: Bool,
    into out: inout Lines
  ) {
    out.add("message \(message.name) {")
    out.depth += 1
    // Map fields name a nested entry type; it prints as map<K, V>, not as a message.
    let entries = Dictionary(
      message.nestedType.filter(\.options.mapEntry).map { (".\(fullName).\($0.name)", $0) },
      uniquingKeysWith: { first, _ in first }
    )
    // Fields by number; a oneof where its lowest-numbered field stands. A proto3 `optional`
    // field's oneof is synthetic: the field prints as `optional` instead.
    var printedOneofs: Set<Int32> = []
    for field in message.field.sorted(by: { $0.number < $1.number }) {
      if field.hasOneofIndex, !field.proto3Optional {
        let index = field.oneofIndex
        guard printedOneofs.insert(index).inserted else { continue }
        let declared = message.oneofDecl.indices.contains(Int(index))
        out.add("oneof \(declared ? message.oneofDecl[Int(index)].name : "oneof_\(index)") {")
        out.depth += 1
        let members = message.field.filter {
          $0.hasOneofIndex && $0.oneofIndex == index && !$0.proto3Optional
        }
        for member in members.sorted(by: { $0.number < $1.number }) {
          out.add(Self.field(member, entries: entries, proto2: proto2))
        }
        out.depth -= 1
        out.add("}")
      } else {
        out.add(Self.field(field, entries: entries, proto2: proto2))
      }
    }
    for nested in message.nestedType.sorted(by: { $0.name < $1.name })
    where !nested.options.mapEntry {
      Self.print(nested, fullName: "\(fullName).\(nested.name)", proto2: proto2, into: &out)
    }
    for enumeration in message.enumType.sorted(by: { $0.name < $1.name }) {
      Self.print(enumeration, into: &out)
    }
    out.depth -= 1
    out.add("}")
  }

  private static func field(
    _ field: Google_Protobuf_FieldDescriptorProto,
    entries: [String: Google_Protobuf_DescriptorProto],
    proto2: Bool
  ) -> String {
    if field.label == .repeated, field.type == .message, let entry = entries[field.typeName],
      entry.field.count == 2
    {
      return
        "map<\(Self.type(of: entry.field[0])), \(Self.type(of: entry.field[1]))> \(field.name) = \(field.number);"
    }
    let label =
      switch field.label {
      case .repeated: "repeated "
      case .required: "required "
      case .optional where proto2 || field.proto3Optional: "optional "
      default: ""
      }
    return "\(label)\(Self.type(of: field)) \(field.name) = \(field.number);"
  }

  private static func type(of field: Google_Protobuf_FieldDescriptorProto) -> String {
    switch field.type {
    case .message, .enum, .group: field.typeName
    case .double: "double"
    case .float: "float"
    case .int64: "int64"
    case .uint64: "uint64"
    case .int32: "int32"
    case .fixed64: "fixed64"
    case .fixed32: "fixed32"
    case .bool: "bool"
    case .string: "string"
    case .bytes: "bytes"
    case .uint32: "uint32"
    case .sfixed32: "sfixed32"
    case .sfixed64: "sfixed64"
    case .sint32: "sint32"
    case .sint64: "sint64"
    }
  }
}
