internal import SwiftProtobuf

/// Definitions from the file descriptors a reflection server sent, printed as grpcurl prints
/// them: proto syntax, with fully qualified type names (`.grpc.testing.Empty`).
struct ProtoText {
  let files: [Google_Protobuf_FileDescriptorProto]

  /// A definition found by its fully qualified name.
  enum Definition {
    case service(Google_Protobuf_ServiceDescriptorProto)
    case method(Google_Protobuf_MethodDescriptorProto)
    case message(Google_Protobuf_DescriptorProto)
    case enumeration(Google_Protobuf_EnumDescriptorProto)
  }

  /// The definition named `symbol` (`grpc.testing.TestService`, `….UnaryCall`, a message or an
  /// enum, nested ones included), if a file defines it.
  func find(_ symbol: String) -> Definition? {
    let wanted = symbol.hasPrefix(".") ? String(symbol.dropFirst()) : symbol
    for file in self.files {
      let package = file.package
      for service in file.service {
        let name = Self.join(package, service.name)
        if name == wanted { return .service(service) }
        if let method = service.method.first(where: { Self.join(name, $0.name) == wanted }) { return .method(method) }
      }
      if let found = Self.find(wanted, in: file.messageType, file.enumType, scope: package) { return found }
    }
    return nil
  }

  private static func find(
    _ wanted: String,
    in messages: [Google_Protobuf_DescriptorProto],
    _ enums: [Google_Protobuf_EnumDescriptorProto],
    scope: String
  ) -> Definition? {
    if let enumeration = enums.first(where: { Self.join(scope, $0.name) == wanted }) { return .enumeration(enumeration) }
    for message in messages {
      let name = Self.join(scope, message.name)
      if name == wanted { return .message(message) }
      if let found = Self.find(wanted, in: message.nestedType, message.enumType, scope: name) { return found }
    }
    return nil
  }

  private static func join(_ scope: String, _ name: String) -> String {
    scope.isEmpty ? name : "\(scope).\(name)"
  }

  /// `symbol is a service:` and its definition, as `grpcurl describe` prints it.
  func describe(_ symbol: String) -> String? {
    guard let definition = self.find(symbol) else { return nil }
    var out = Lines()
    switch definition {
    case .service(let service):
      out.add("\(symbol) is a service:")
      Self.print(service, into: &out)
    case .method(let method):
      out.add("\(symbol) is a method:")
      out.add(Self.rpc(method))
    case .message(let message):
      out.add("\(symbol) is a message:")
      Self.print(message, into: &out)
    case .enumeration(let enumeration):
      out.add("\(symbol) is an enum:")
      Self.print(enumeration, into: &out)
    }
    return out.text
  }

  /// The fully qualified names of `service`'s methods (`grpc.testing.TestService.EmptyCall`).
  func methods(of service: String) -> [String]? {
    guard case .service(let definition)? = self.find(service) else { return nil }
    return definition.method.map { Self.join(service, $0.name) }
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

  private static func print(_ service: Google_Protobuf_ServiceDescriptorProto, into out: inout Lines) {
    out.add("service \(service.name) {")
    out.depth += 1
    for method in service.method { out.add(Self.rpc(method)) }
    out.depth -= 1
    out.add("}")
  }

  private static func print(_ enumeration: Google_Protobuf_EnumDescriptorProto, into out: inout Lines) {
    out.add("enum \(enumeration.name) {")
    out.depth += 1
    for value in enumeration.value { out.add("\(value.name) = \(value.number);") }
    out.depth -= 1
    out.add("}")
  }

  private static func print(_ message: Google_Protobuf_DescriptorProto, into out: inout Lines) {
    out.add("message \(message.name) {")
    out.depth += 1
    let entries = message.nestedType.filter(\.options.mapEntry)
    // Fields outside any oneof, in order, each oneof where its first field stands. A proto3
    // `optional` field's oneof is synthetic: the field prints as `optional` instead.
    var printedOneofs: Set<Int32> = []
    for field in message.field {
      if field.hasOneofIndex, !field.proto3Optional {
        let index = field.oneofIndex
        guard printedOneofs.insert(index).inserted else { continue }
        let declared = message.oneofDecl.indices.contains(Int(index))
        out.add("oneof \(declared ? message.oneofDecl[Int(index)].name : "oneof_\(index)") {")
        out.depth += 1
        for member in message.field where member.hasOneofIndex && member.oneofIndex == index && !member.proto3Optional {
          out.add(Self.field(member, entries: entries))
        }
        out.depth -= 1
        out.add("}")
      } else {
        out.add(Self.field(field, entries: entries))
      }
    }
    for nested in message.nestedType where !nested.options.mapEntry { Self.print(nested, into: &out) }
    for enumeration in message.enumType { Self.print(enumeration, into: &out) }
    out.depth -= 1
    out.add("}")
  }

  private static func field(
    _ field: Google_Protobuf_FieldDescriptorProto,
    entries: [Google_Protobuf_DescriptorProto]
  ) -> String {
    if field.label == .repeated, field.type == .message,
      let entry = entries.first(where: { field.typeName.hasSuffix(".\($0.name)") }),
      entry.field.count == 2
    {
      return "map<\(Self.type(of: entry.field[0])), \(Self.type(of: entry.field[1]))> \(field.name) = \(field.number);"
    }
    let label =
      switch field.label {
      case .repeated: "repeated "
      case .required: "required "
      case .optional where field.proto3Optional: "optional "
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
