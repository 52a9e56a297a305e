// Public: the lock's storage is part of its inlinable `withLock` (see `_LockedValue`).
public import NIOConcurrencyHelpers

/// A value behind a lock, with `Synchronization.Mutex`'s `withLock`, on a pthread mutex
/// (`NIOLockedValueBox`: the value and the mutex in one allocation). The package's one lock type.
/// A copy shares the value and the lock, like a reference.
///
/// Why not `Mutex`: on Linux a contended `Mutex` is handed from thread to thread by the kernel
/// (a priority-inheriting futex), which ThreadSanitizer cannot see, so every contended critical
/// section is reported as a data race and a real race would drown among them. ThreadSanitizer
/// sees a pthread mutex (scripts/test-sanitized.sh).
///
/// The package's modules name it `LockedValue`. The type is public, with no public members,
/// because the optimizer specializes a generic method in another module only when the type
/// declaring it is public: an `@inlinable` method of a `package` type is called unspecialized
/// from the package's other modules, and each lock taken there (the async face takes two for
/// each message of a stream) would look up the metadata of its closure's types at run time.
/// Within this module every use is specialized either way.
public struct _LockedValue<Value>: @unchecked Sendable {
  @usableFromInline
  let box: NIOLockedValueBox<Value>

  package init(_ value: Value) {
    self.box = NIOLockedValueBox(value)
  }

  /// Runs `body` with the value, holding the lock. No user code, and nothing that waits, under
  /// it.
  @inlinable
  package func withLock<Result, Failure: Error>(
    _ body: (inout Value) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    // The box's closure rethrows untyped errors; a `Result` carries the typed one out of it.
    let outcome = self.box.withLockedValue { value in
      Swift.Result { () throws(Failure) -> Result in try body(&value) }
    }
    // Consumed, so the value moves out (`get()` would copy it and destroy the original).
    switch consume outcome {
    case .success(let result): return result
    case .failure(let error): throw error
    }
  }
}

/// The package's lock type (see ``_LockedValue``).
package typealias LockedValue = _LockedValue
