internal import NIOCore

/// Runs tasks on one event loop: the loop of a channel's connections.
///
/// A call's task that prefers this executor reads and writes its HTTP/2 stream on the thread
/// that does the stream's I/O, so neither a response nor a request crosses threads inside the
/// transport (Design article, "The path of a call"). Only grpc-calls' own call tasks use it:
/// application code reaches the application through handler queues, never on the loop, except
/// what an application chose to run inline (inline interceptors, marshallers, token providers).
///
/// Jobs wait in a queue of the executor's own, which the loop empties in turns: a closure per
/// job, as `EventLoop.execute` takes, would cost an allocation for each of a call's jobs. (NIO's
/// own `EventLoop.enqueue(_:)` takes a job without one, but runs it as the loop's serial
/// executor, not as a task executor, so the runtime would not see the task on the executor it
/// prefers.) A turn runs the jobs that were waiting when it began; those they enqueue wait for
/// the next turn, behind the closures already queued on the loop, so a task that keeps
/// enqueueing cannot hold them off. A job enqueued while a turn waits joins it, and may so run
/// before a closure queued on the loop after the turn was scheduled.
final class EventLoopTaskExecutor: TaskExecutor {
  private let loop: any EventLoop
  private let jobs = LockedValue(Jobs())

  private struct Jobs {
    var waiting = CircularBuffer<UnownedJob>()
    /// Whether a turn is scheduled on the loop or running: one at a time.
    var turnScheduled = false
  }

  init(loop: any EventLoop) {
    self.loop = loop
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let scheduleTurn = self.jobs.withLock { jobs in
      jobs.waiting.append(job)
      guard !jobs.turnScheduled else { return false }
      jobs.turnScheduled = true
      return true
    }
    if scheduleTurn {
      self.scheduleTurn()
    }
  }

  private func scheduleTurn() {
    // Captures only `self`, which is the closure's context: no allocation.
    self.loop.execute { self.runTurn() }
  }

  private func runTurn() {
    var count = self.jobs.withLock { $0.waiting.count }
    let executor = self.asUnownedTaskExecutor()
    while count > 0, let job = self.jobs.withLock({ $0.waiting.popFirst() }) {
      job.runSynchronously(on: executor)
      count -= 1
    }
    let again = self.jobs.withLock { jobs in
      jobs.turnScheduled = !jobs.waiting.isEmpty
      return jobs.turnScheduled
    }
    if again {
      self.scheduleTurn()
    }
  }
}
