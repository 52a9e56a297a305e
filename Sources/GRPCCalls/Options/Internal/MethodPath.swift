internal import GRPCCallsInput
internal import GRPCCore

extension MethodPath {
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
  private static let descriptors = LockedValue<[String: MethodDescriptor]>([:])
}
