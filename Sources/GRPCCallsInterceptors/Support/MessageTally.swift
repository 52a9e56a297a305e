internal import Foundation
internal import GRPCCalls

/// Counts one direction of a call's messages and their bytes.
///
/// A message is `Data` on calls without a marshaller; a typed message is measured by
/// serializing it with the call's marshaller, when the interceptor is asked to (it costs a
/// second serialization per message).
struct MessageTally: Sendable {
  private(set) var messages = 0
  private(set) var bytes = 0

  /// Counts `message`; returns its size in bytes, or `nil` if it could not be measured.
  @discardableResult
  mutating func count(_ message: any Sendable, marshaller: (any GRPCMarshaller)?) -> Int? {
    self.messages += 1
    guard let size = Self.size(of: message, marshaller: marshaller) else { return nil }
    self.bytes += size
    return size
  }

  static func size(of message: any Sendable, marshaller: (any GRPCMarshaller)?) -> Int? {
    if let data = message as? Data { return data.count }
    return (try? marshaller?.serialize(message))?.count
  }
}
