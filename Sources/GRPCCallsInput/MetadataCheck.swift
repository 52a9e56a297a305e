package import GRPCCore

/// What gRPC allows in request metadata, checked before a call is made, so that a bad entry
/// fails the call with its name rather than as a reset stream.
package enum MetadataCheck {
  /// `metadata` with upper-case ASCII in keys lowered (HTTP/2 sends keys in lower case; gRPC
  /// Objective-C and grpc-java lower them too), after checking what gRPC allows: keys of ASCII
  /// letters, digits, `-`, `_` and `.`; binary values only under keys ending in `-bin`; text
  /// values of printable ASCII.
  package static func validated(_ metadata: Metadata) throws(InvalidInput) -> Metadata {
    var lowered = false
    for (key, value) in metadata {
      guard !key.isEmpty else {
        throw InvalidInput("Invalid request metadata key '': a key must not be empty")
      }
      guard
        key.utf8.allSatisfy({
          Self.isKeyByte($0) || (UInt8(ascii: "A") ... UInt8(ascii: "Z")).contains($0)
        })
      else {
        throw InvalidInput(
          "Invalid request metadata key '\(key)': keys are ASCII letters, digits, '-', '_' and '.'"
        )
      }
      lowered = lowered || !key.utf8.allSatisfy(Self.isKeyByte)
      switch value {
      case .binary where !key.lowercased().hasSuffix("-bin"):
        throw InvalidInput(
          "Request metadata key '\(key)' has a binary value: binary values need a key ending in -bin"
        )
      case .string(let text)
      where !key.lowercased().hasSuffix("-bin")
        && !text.utf8.allSatisfy({ (0x20 ... 0x7E).contains($0) }):
        throw InvalidInput(
          "Invalid value of request metadata key '\(key)': text values are printable ASCII; send other data "
            + "as binary under a key ending in -bin"
        )
      default:
        break
      }
    }
    guard lowered else { return metadata }
    return Metadata(metadata.map { (key: $0.key.lowercased(), value: $0.value) })
  }

  /// A byte a key may hold once lowered.
  package static func isKeyByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a") ... UInt8(ascii: "z"), UInt8(ascii: "0") ... UInt8(ascii: "9"):
      true
    case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
      true
    default:
      false
    }
  }
}
