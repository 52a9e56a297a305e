internal import Foundation

/// Marks, on the current thread, the element of a call's response path that a response is being
/// passed to from a block that runs within that element's queue: that element may deliver the
/// response in the block instead of scheduling a block of its own.
///
/// An interceptor's default queue targets the queue of the element above it (the response
/// handler's queue, for the first interceptor). A block of a queue runs within every queue of its
/// target chain: while it runs, a serial target runs nothing else, and `getSpecific` and
/// `dispatchPrecondition` see the target as current. So when the interceptor's block passes a
/// response up, the element above can deliver it there and then, in order as long as that element
/// was idle (its pending list orders the rest), and the response reaches the handler with no
/// block of the handler's queue of its own, which a concurrent handler queue would run on yet
/// another thread.
///
/// The mark names one receiver, for the span of one hand-off: anything else the handler's code
/// does on that thread (cancelling another call with the same handler queue, say) is scheduled
/// as before, so no callback ever runs inside another one of the same queue.
///
/// A thread-local value rather than a queue-specific one: a queue frees its specific values, when
/// it is freed, in a block of a global queue, which would wake a thread for every call.
enum ResponseHandOff {
  private static let key: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key, nil)
    precondition(status == 0, "pthread_key_create failed with \(status)")
    return key
  }()

  /// Runs `body`, which passes a response to `receiver`, from a block that runs within the queue
  /// `receiver` delivers on.
  static func passing(to receiver: AnyObject, _ body: () -> Void) {
    let outer = pthread_getspecific(Self.key)
    // Unretained: `receiver` outlives `body`, which its caller holds it for.
    pthread_setspecific(Self.key, Unmanaged.passUnretained(receiver).toOpaque())
    defer { pthread_setspecific(Self.key, outer) }
    body()
  }

  /// Whether the response `receiver` is given now comes from a block that runs within its queue.
  static func isPassing(to receiver: AnyObject) -> Bool {
    pthread_getspecific(Self.key) == Unmanaged.passUnretained(receiver).toOpaque()
  }
}
