internal import Foundation
internal import SwiftProtobuf

/// The files the interop server describes over reflection, and where each symbol is defined:
/// what a reflection service looks up (grpc-go's and grpcio's answer from their registries of
/// compiled descriptors; this one from the FileDescriptorSet protoc wrote, `InteropDescriptors`).
struct InteropDescriptorIndex: Sendable {
  /// Every file, by name (`src/proto/grpc/testing/test.proto`).
  private var files: [String: Google_Protobuf_FileDescriptorProto] = [:]
  /// The file that defines each fully qualified symbol: messages, enums and their values,
  /// fields, services and methods.
  private var symbols: [String: String] = [:]
  /// The fully qualified names of every message.
  private var messages: Set<String> = []

  /// The index of the descriptors protoc wrote for the interop server.
  static func interop() throws -> InteropDescriptorIndex {
    let base64 = InteropDescriptors.fileDescriptorSetBase64
    guard let bytes = Data(base64Encoded: base64, options: .ignoreUnknownCharacters) else {
      throw DescriptorSetError(
        description: "InteropDescriptors is not base64: run scripts/generate-grpc-calls.sh"
      )
    }
    return try InteropDescriptorIndex(Google_Protobuf_FileDescriptorSet(serializedBytes: bytes))
  }

  init(_ set: Google_Protobuf_FileDescriptorSet) {
    for file in set.file {
      self.files[file.name] = file
      let scope = file.package.isEmpty ? "" : file.package + "."
      for message in file.messageType { self.add(message, in: scope, file: file.name) }
      for enumeration in file.enumType { self.add(enumeration, in: scope, file: file.name) }
      for service in file.service {
        let name = scope + service.name
        self.symbols[name] = file.name
        for method in service.method { self.symbols[name + "." + method.name] = file.name }
      }
    }
  }

  private mutating func add(
    _ message: Google_Protobuf_DescriptorProto,
    in scope: String,
    file: String
  ) {
    let name = scope + message.name
    self.symbols[name] = file
    self.messages.insert(name)
    for field in message.field { self.symbols[name + "." + field.name] = file }
    for nested in message.nestedType { self.add(nested, in: name + ".", file: file) }
    for enumeration in message.enumType { self.add(enumeration, in: name + ".", file: file) }
  }

  private mutating func add(
    _ enumeration: Google_Protobuf_EnumDescriptorProto,
    in scope: String,
    file: String
  ) {
    self.symbols[scope + enumeration.name] = file
    // An enum's values are scoped beside the enum, not inside it (as in C++).
    for value in enumeration.value { self.symbols[scope + value.name] = file }
  }

  /// The file `name` first, then every file it imports, directly or not; `nil` if unknown.
  func fileWithImports(named name: String) -> [Google_Protobuf_FileDescriptorProto]? {
    guard self.files[name] != nil else { return nil }
    var order = [name]
    var seen: Set<String> = [name]
    var next = 0
    while next < order.count {
      for dependency in self.files[order[next]]?.dependency ?? []
      where seen.insert(dependency).inserted {
        order.append(dependency)
      }
      next += 1
    }
    return order.compactMap { self.files[$0] }
  }

  /// The name of the file that defines `symbol` (a leading dot allowed); `nil` if none does.
  func file(definingSymbol symbol: String) -> String? {
    self.symbols[Self.qualified(symbol)]
  }

  /// Whether `name` is a message of these files.
  func isMessage(_ name: String) -> Bool {
    self.messages.contains(Self.qualified(name))
  }

  /// The field numbers of the extensions these files declare of message `name`.
  func extensionNumbers(of name: String) -> [Int32] {
    self.files.values.flatMap { file in
      file.extension.filter { $0.extendee == "." + Self.qualified(name) }.map(\.number)
    }.sorted()
  }

  /// The file that declares extension `number` of message `name`; `nil` if none does.
  func file(extending name: String, number: Int32) -> String? {
    self.files.values.first { file in
      file.extension.contains { $0.extendee == "." + Self.qualified(name) && $0.number == number }
    }?.name
  }

  /// `name` without the leading dot a fully qualified name may carry (`.grpc.testing.Empty`).
  private static func qualified(_ name: String) -> String {
    name.hasPrefix(".") ? String(name.dropFirst()) : name
  }
}

/// The interop server's descriptors cannot be read: the generated file is damaged.
struct DescriptorSetError: Error, CustomStringConvertible {
  var description: String
}
