import NIOCore
import NIOPosix
import Testing

@testable import GRPCCalls

@Suite("Event-loop task executor: tasks on a channel's loop")
struct EventLoopTaskExecutorTests {
  @Test("tasks that prefer it run on its loop, across suspensions, each to its end")
  func runsTasksOnTheLoop() async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let executor = EventLoopTaskExecutor(loop: loop)
    let offLoop = LockedValue(0)
    let finished = await withTaskGroup(of: Int.self) { tasks in
      for _ in 0 ..< 200 {
        tasks.addTask(executorPreference: executor) {
          for _ in 0 ..< 10 {
            if !loop.inEventLoop { offLoop.withLock { $0 += 1 } }
            await Task.yield()
          }
          return loop.inEventLoop ? 1 : 0
        }
      }
      return await tasks.reduce(0, +)
    }
    #expect(finished == 200)
    #expect(offLoop.withLock { $0 } == 0)
    try await group.shutdownGracefully()
  }

  @Test("a task that keeps yielding leaves the loop's own work its turn")
  func yieldingTaskDoesNotStarveTheLoop() async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let executor = EventLoopTaskExecutor(loop: loop)
    let ran = LockedValue(false)
    // The loop's closure is queued behind the task's job; were the jobs a turn enqueues run in
    // that same turn, the yielding task would keep the loop and the closure would not run until
    // the task gave up.
    let ranWhileYielding = await Task(executorPreference: executor) {
      loop.execute { ran.withLock { $0 = true } }
      var yields = 0
      while !ran.withLock({ $0 }), yields < 100_000 {
        yields += 1
        await Task.yield()
      }
      return ran.withLock { $0 }
    }.value
    #expect(ranWhileYielding)
    try await group.shutdownGracefully()
  }
}
