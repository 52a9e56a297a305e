internal import GRPCCallsInput
internal import GRPCCore

/// The properties the fuzzer checks on one input: its first byte picks what the rest is given
/// to (a host, request metadata, channel arguments or a method path). Parsing never traps, and
/// what it accepts or refuses is consistent; a broken property stops the process with a
/// message, which libFuzzer reports as a crash and saves the input for.
enum FuzzChecks {
  static func check(_ input: [UInt8]) {
    guard let selector = input.first else { return }
    let body = Array(input.dropFirst())
    switch selector % 4 {
    case 0: Self.checkHost(String(decoding: body, as: UTF8.self))
    case 1: Self.checkMetadata(body)
    case 2: Self.checkChannelArgs(String(decoding: body, as: UTF8.self))
    default: Self.checkPath(String(decoding: body, as: UTF8.self))
    }
  }

  /// An accepted host prints as a string that parses back to the same target (channel keys and
  /// per-host settings rely on it); a refusal quotes the host.
  static func checkHost(_ host: String) {
    do {
      let target = try HostTarget(parsing: host)
      let printed = target.description
      guard let reparsed = try? HostTarget(parsing: printed), reparsed == target else {
        fatalError(
          "host \(host.debugDescription) parsed to \(target), printed as \(printed.debugDescription), which does not parse back to it"
        )
      }
      if case .dns(_, let port) = target, !(0 ... 65535).contains(port) {
        fatalError("host \(host.debugDescription) gave port \(port)")
      }
    } catch {
      Self.expect(
        error.message.contains("'\(host)'"),
        "the refusal of host \(host.debugDescription) does not quote it: \(error)"
      )
    }
  }

  /// Lines of `key:value`; a key ending in `-bin` has a binary value (GRPCCore asserts that no
  /// other key has one, so apps cannot make such metadata in a debug build). Accepted metadata
  /// keeps its entries and values with lower-case keys; a refusal says what is wrong.
  static func checkMetadata(_ body: [UInt8]) {
    var metadata = Metadata()
    for line in body.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
      let colon = line.firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
      let key = String(decoding: line[..<colon], as: UTF8.self)
      let value = Array(line[colon...].dropFirst())
      if key.hasSuffix("-bin") {
        metadata.addBinary(value, forKey: key)
      } else {
        metadata.addString(String(decoding: value, as: UTF8.self), forKey: key)
      }
    }
    do {
      let checked = try MetadataCheck.validated(metadata)
      Self.expect(
        checked.count == metadata.count,
        "validated metadata lost entries: \(metadata) → \(checked)"
      )
      for ((key, value), (checkedKey, checkedValue)) in zip(metadata, checked) {
        Self.expect(
          checkedKey == key.lowercased() && checkedKey.utf8.allSatisfy(MetadataCheck.isKeyByte),
          "key \(key.debugDescription) became \(checkedKey.debugDescription)"
        )
        Self.expect(checkedValue == value, "the value of \(key.debugDescription) changed")
      }
    } catch {
      Self.expect(
        error.message.contains("metadata key"),
        "a metadata refusal names no key: \(error)"
      )
    }
  }

  /// Lines of `name=value`; a value that reads as an integer is one. Accepted settings are in
  /// gRPC core's ranges; a refusal names the argument.
  static func checkChannelArgs(_ body: String) {
    var arguments: [String: ChannelArgSettings.Value] = [:]
    for line in body.split(separator: "\n") {
      let parts = line.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let value = parts.count > 1 ? String(parts[1]) : ""
      arguments[String(parts[0])] = Int(value).map { .integer($0) } ?? .string(value)
    }
    do {
      let settings = try ChannelArgSettings(parsing: arguments)
      let durations = [
        settings.keepaliveInterval, settings.keepaliveTimeout, settings.connectMinTimeout,
        settings.connectInitialBackoff, settings.connectMaxBackoff,
      ].compactMap { $0 }
      Self.expect(
        durations.allSatisfy { $0.isFinite && $0 >= 0 },
        "a duration out of range: \(settings)"
      )
      Self.expect(
        settings.maxFrameSize.map { (16_384 ... 16_777_215).contains($0) } ?? true,
        "frame size \(settings)"
      )
      Self.expect(
        settings.unknownNames.allSatisfy { arguments[$0] != nil },
        "an unknown name not given: \(settings)"
      )
    } catch {
      Self.expect(
        error.message.hasPrefix("Channel argument '"),
        "a channel argument refusal names no argument: \(error)"
      )
    }
  }

  /// An accepted path is `/service/method` exactly.
  static func checkPath(_ path: String) {
    guard let parsed = MethodPath(path) else { return }
    Self.expect(
      "/\(parsed.service)/\(parsed.method)" == path,
      "path \(path.debugDescription) split as \(parsed)"
    )
  }

  private static func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
  }
}
