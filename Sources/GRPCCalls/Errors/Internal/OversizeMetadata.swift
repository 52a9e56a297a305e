internal import GRPCCore

/// Adds the size of the request metadata to the error of a stream the server ended without a
/// status, when the metadata is large: servers refuse header lists over their limit (commonly
/// 8 or 16 KiB) by resetting the stream, and neither the reset nor the core says why.
enum OversizeMetadata {
  /// Above this many bytes of request metadata, a reset is worth explaining.
  static let commonLimit = 8 * 1024

  static func explain(_ error: GRPCError, metadata: Metadata) -> GRPCError {
    guard
      CoreFailure(error)?.endedStreamWithoutStatus == true
        || error.message.hasPrefix(StreamReset.messagePrefix)
        || error.message.hasPrefix(StreamEndInterpreter.connectionFailedPrefix)
    else { return error }
    // HPACK's size of an entry: name, value and 32 bytes; binary values travel as base64.
    let bytes = metadata.reduce(0) { total, entry in
      switch entry.value {
      case .string(let text): total + entry.key.utf8.count + text.utf8.count + 32
      case .binary(let data): total + entry.key.utf8.count + (data.count + 2) / 3 * 4 + 32
      }
    }
    guard bytes > Self.commonLimit else { return error }
    var explained = error
    let separator = error.message.hasSuffix(".") ? " " : ". "
    explained.message +=
      separator + "The request metadata is \(bytes / 1024) KiB: "
      + "servers commonly refuse header lists over 8 to 16 KiB"
    return explained
  }
}
