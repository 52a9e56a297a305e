internal import GRPCCore

/// How request messages are compressed (``GRPCCallOptions/compressionAlgorithm``).
public struct GRPCCompressionAlgorithm: Hashable, Sendable, CustomStringConvertible {
  private enum Wrapped: Hashable, Sendable {
    case none
    case deflate
    case gzip
  }

  private let wrapped: Wrapped

  /// Requests are sent uncompressed. The default.
  public static let none = Self(wrapped: .none)
  /// Requests are compressed with deflate (`grpc-encoding: deflate`).
  public static let deflate = Self(wrapped: .deflate)
  /// Requests are compressed with gzip (`grpc-encoding: gzip`).
  public static let gzip = Self(wrapped: .gzip)

  public var description: String {
    switch self.wrapped {
    case .none: "identity"
    case .deflate: "deflate"
    case .gzip: "gzip"
    }
  }

  /// The core's algorithm.
  var core: CompressionAlgorithm {
    switch self.wrapped {
    case .none: .none
    case .deflate: .deflate
    case .gzip: .gzip
    }
  }

  /// The core's set holding just this algorithm.
  var coreSet: CompressionAlgorithmSet {
    switch self.wrapped {
    case .none: .none
    case .deflate: .deflate
    case .gzip: .gzip
    }
  }
}
