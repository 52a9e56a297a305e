internal import NIOCore

/// Runs tasks on one event loop: the loop of a channel's connections.
///
/// A call's task that prefers this executor reads and writes its HTTP/2 stream on the thread
/// that does the stream's I/O, so neither a response nor a request crosses threads inside the
/// transport (Design article, "The path of a call"). Only grpc-calls' own call tasks use it:
/// application code reaches the application through handler queues, never on the loop, except
/// what an application chose to run inline (inline interceptors, marshallers, token providers).
final class EventLoopTaskExecutor: TaskExecutor {
  private let loop: any EventLoop

  init(loop: any EventLoop) {
    self.loop = loop
  }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    self.loop.execute {
      job.runSynchronously(on: self.asUnownedTaskExecutor())
    }
  }
}
