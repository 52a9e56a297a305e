/// A method path split into its service and method: `/package.Service/Method`.
package struct MethodPath: Hashable, Sendable {
  package var service: String
  package var method: String

  /// `nil` unless `path` is `/service/method` with neither part empty.
  package init?(_ path: String) {
    guard path.first == "/" else { return nil }
    let parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
    self.service = String(parts[0])
    self.method = String(parts[1])
  }
}
