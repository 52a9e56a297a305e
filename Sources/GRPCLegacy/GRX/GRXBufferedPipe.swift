/// A writeable that is also a writer (gRPC Objective-C's `GRXBufferedPipe`): what is written
/// into it comes out of it, in order.
///
/// Values written before the pipe is started, or while it is paused, are buffered; an end
/// written into it (with or without an error) comes out after the values before it, so a pipe
/// finished while paused delivers the rest when resumed.
///
/// ```swift
/// let requests = GRXBufferedPipe()
/// requests.writeValue(firstRequest)      // buffered until the call starts the pipe
/// let call = GRPCCall(host: host, path: path, requestsWriter: requests)
/// requests.writeValue(secondRequest)
/// requests.writesFinished(withError: nil)
/// ```
public final class GRXBufferedPipe: GRXWriter, GRXWriteable, @unchecked Sendable {
  // @unchecked: no state of its own; GRXWriter's is behind its lock.

  public override init() {
    super.init()
  }

  public func writeValue(_ value: any Sendable) {
    self.emit(value)
  }

  public func writesFinished(withError error: (any Error)?) {
    self.emitFinish(withError: error)
  }
}
