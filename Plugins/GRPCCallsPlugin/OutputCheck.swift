/// Catches, before the build, the outputs that SwiftPM would reject with only "multiple
/// producers": it compiles a target's files by their names, wherever their folders, so two
/// files of one name cannot be in one target.
enum OutputCheck {
  /// A file the plugin will write, for `proto` (relative to the target).
  struct Output {
    var proto: String
    var path: String
    /// What its generator appends to the proto's name (`.pb.swift`).
    var suffix: String
    /// The configuration that turns its generator off (`"messages": false`).
    var setting: String

    var fileName: String { Self.fileName(self.path) }

    /// Its name without the proto's folders, as protoc writes it beside a proto run from its
    /// own folder: the name of a copy committed earlier (`route_guide.pb.swift` for
    /// `protos/route_guide.proto`).
    var committedName: String { Self.fileName(self.proto).dropLast(".proto".count) + self.suffix }

    static func fileName(_ path: String) -> String {
      String(path.split(separator: "/").last ?? Substring(path))
    }
  }

  /// Throws when two outputs, or an output and one of the target's own Swift files (`existing`,
  /// relative to the target), share a name.
  static func check(_ outputs: [Output], existing: [String]) throws {
    var byName: [String: Output] = [:]
    for output in outputs {
      if let other = byName[output.fileName] {
        throw PluginError(
          "\(other.proto) and \(output.proto) would both generate \(output.fileName), and SwiftPM "
            + "compiles a target's files by name: set \"fileNaming\": \"PathToUnderscores\" (the "
            + "default) in \(PluginConfig.fileName), or rename one of them"
        )
      }
      byName[output.fileName] = output
    }
    for file in existing {
      let name = Output.fileName(file)
      let output = byName[name] ?? outputs.first { $0.committedName == name }
      guard let output else { continue }
      throw PluginError(
        "\(file) is what the build plugin generates for \(output.proto): delete it, or keep it and "
          + "set \(output.setting) in \(PluginConfig.fileName)"
      )
    }
  }
}
