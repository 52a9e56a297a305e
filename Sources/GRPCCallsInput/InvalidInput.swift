/// Why a host, method path, metadata entry or channel argument given to a call was refused:
/// a message that names the value and says what is expected. The calls layer reports it as
/// `INVALID_ARGUMENT`.
package struct InvalidInput: Error, Hashable, Sendable, CustomStringConvertible {
  package var message: String

  package init(_ message: String) {
    self.message = message
  }

  package var description: String { self.message }
}
