internal import GRPCCalls
internal import GRPCCore
internal import SwiftProtobuf

/// The file descriptors of one conversation, by name, and what is still missing.
struct FileSet {
  private var files: [String: Google_Protobuf_FileDescriptorProto] = [:]
  /// Names in the order they arrived.
  private var arrival: [String] = []
  /// Dependencies the server does not have.
  private var unavailable: Set<String> = []

  var count: Int { self.files.count }

  /// Leaves `name` out: the server does not have it.
  mutating func markUnavailable(_ name: String) {
    self.unavailable.insert(name)
  }

  /// Adds the files of a `FileDescriptorResponse`.
  ///
  /// - Parameter expecting: The file asked for, which the answer must hold.
  /// - Throws: `INTERNAL` for an answer that is not a file descriptor response, a descriptor
  ///   that does not decode, or one without the file asked for.
  mutating func add(_ response: ReflectionResponse, expecting: String? = nil) throws {
    guard case .fileDescriptorResponse(let answer)? = response.messageResponse else {
      throw GRPCReflectionClient.unexpected(response, asked: "file descriptors")
    }
    for bytes in answer.fileDescriptorProto {
      let file: Google_Protobuf_FileDescriptorProto
      do {
        file = try Google_Protobuf_FileDescriptorProto(serializedBytes: bytes)
      } catch {
        throw GRPCError(
          code: .internalError,
          message: "The reflection server sent a file descriptor that does not decode: \(error)",
          cause: error
        )
      }
      if self.files.updateValue(file, forKey: file.name) == nil {
        self.arrival.append(file.name)
      }
    }
    if let expecting, self.files[expecting] == nil {
      throw GRPCError(
        code: .internalError,
        message: "The reflection server answered a request for \(expecting) without that file"
      )
    }
  }

  /// A file that a file of the set imports and the set does not hold yet.
  var missingDependency: String? {
    for name in self.arrival {
      if let missing = self.files[name]?.dependency.first(where: {
        self.files[$0] == nil && !self.unavailable.contains($0)
      }) {
        return missing
      }
    }
    return nil
  }

  /// Every file, each after the files it imports.
  var dependenciesFirst: [Google_Protobuf_FileDescriptorProto] {
    var ordered: [Google_Protobuf_FileDescriptorProto] = []
    var placed: Set<String> = []
    func place(_ name: String) {
      guard !placed.contains(name), let file = self.files[name] else { return }
      placed.insert(name)
      for dependency in file.dependency { place(dependency) }
      ordered.append(file)
    }
    for name in self.arrival { place(name) }
    return ordered
  }
}
