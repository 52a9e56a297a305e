internal import NIOConcurrencyHelpers

/// A value behind a lock, with `Synchronization.Mutex`'s `withLock`, on a pthread mutex
/// (`NIOLock`). The package's one lock type.
///
/// Why not `Mutex`: on Linux a contended `Mutex` is handed from thread to thread by the kernel
/// (a priority-inheriting futex), which ThreadSanitizer cannot see, so every contended critical
/// section is reported as a data race and a real race would drown among them. ThreadSanitizer
/// sees a pthread mutex (scripts/test-sanitized.sh).
package final class LockedValue<Value>: @unchecked Sendable {
  private let lock = NIOLock()
  private var value: Value

  package init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with the value, holding the lock. No user code, and nothing that waits, under
  /// it.
  package func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    self.lock.lock()
    defer { self.lock.unlock() }
    return try body(&self.value)
  }
}
