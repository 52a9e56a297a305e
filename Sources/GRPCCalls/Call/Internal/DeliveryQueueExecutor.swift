internal import Dispatch

/// Runs a task's jobs on a dispatch queue: the queue a call's responses are delivered on.
///
/// A stream that floods the client is read on the queue its responses go to, so each message
/// crosses one thread boundary (from the transport to that queue) instead of two (to the
/// shared pool, then to the queue): the reading task delivers a response within the queue,
/// where the element above takes it without a block of its own. The task holds the queue only
/// between two of its own suspensions: for what the transport had already buffered, a burst of
/// responses handed up one after another, and never while it waits for the network.
final class DeliveryQueueExecutor: TaskExecutor {
  private let queue: DispatchQueue

  init(queue: DispatchQueue) {
    self.queue = queue
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    self.queue.async {
      job.runSynchronously(on: self.asUnownedTaskExecutor())
    }
  }
}
