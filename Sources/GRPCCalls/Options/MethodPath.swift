internal import GRPCCore
internal import Synchronization

/// A method path split into its service and method: `/package.Service/Method`.
struct MethodPath: Hashable, Sendable {
  var service: String
  var method: String

  init?(_ path: String) {
    guard path.first == "/" else { return nil }
    let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
    self.service = String(parts[0])
    self.method = String(parts[1])
  }

  /// The core's descriptor for `path`.
  ///
  /// - Throws: `INVALID_ARGUMENT` when `path` is not `/service/method` (an interceptor may have
  ///   rewritten a path that ``GRPCRequestOptions`` had validated).
  static func descriptor(for path: String) throws(GRPCError) -> MethodDescriptor {
    if let known = Self.descriptors.withLock({ $0[path] }) {
      return known
    }
    guard let parsed = MethodPath(path) else {
      throw GRPCError(
        code: .invalidArgument,
        message: "The method path '\(path)' is not of the form /service/method"
      )
    }
    let descriptor = MethodDescriptor(fullyQualifiedService: parsed.service, method: parsed.method)
    Self.descriptors.withLock { descriptors in
      // A process calls a bounded set of methods; a bound keeps a stream of made-up paths from
      // growing it without end.
      if descriptors.count >= 4096 { descriptors.removeAll() }
      descriptors[path] = descriptor
    }
    return descriptor
  }

  /// The descriptors of the paths called so far: parsed once per method, not once per call.
  private static let descriptors = Mutex<[String: MethodDescriptor]>([:])
}
