import Dispatch
import Testing

@testable import GRPCCalls

@Suite("DeliveryQueueExecutor")
struct DeliveryQueueExecutorTests {
  @Test("a task that prefers it runs its jobs on the queue, before and after a suspension")
  func runsOnQueue() async {
    let queue = DispatchQueue(label: "delivery-queue")
    let key = DispatchSpecificKey<String>()
    queue.setSpecific(key: key, value: "delivery-queue")
    let executor = DeliveryQueueExecutor(queue: queue)
    let seen = await Task(executorPreference: executor) {
      let before = DispatchQueue.getSpecific(key: key)
      await Task.yield()
      try? await Task.sleep(for: .milliseconds(1))
      let after = DispatchQueue.getSpecific(key: key)
      return [before, after]
    }.value
    #expect(seen == ["delivery-queue", "delivery-queue"])
  }
}
