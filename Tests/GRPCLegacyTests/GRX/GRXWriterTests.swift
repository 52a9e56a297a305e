import Dispatch
import GRPCCalls
import GRPCCore
import Testing

@testable import GRPCLegacy

/// Records what a writer wrote, and whether callbacks ever overlapped.
final class RecordingWriteable: GRXWriteable {
  private let state = LockedValue<
    (values: [String], ends: [String], inside: Bool, overlapped: Bool)
  >(([], [], false, false))
  private let onValue: @Sendable (RecordingWriteable, Int) -> Void

  init(onValue: @escaping @Sendable (RecordingWriteable, Int) -> Void = { _, _ in }) {
    self.onValue = onValue
  }

  var values: [String] { self.state.withLock { $0.values } }
  var ends: [String] { self.state.withLock { $0.ends } }
  var overlapped: Bool { self.state.withLock { $0.overlapped } }

  func writeValue(_ value: any Sendable) {
    let count = self.enter {
      $0.values.append("\(value)")
      return $0.values.count
    }
    self.onValue(self, count)
    self.leave()
  }

  func writesFinished(withError error: (any Error)?) {
    _ = self.enter { state -> Int in
      state.ends.append(error.map { ($0 as? GRPCError)?.message ?? "\($0)" } ?? "end")
      return 0
    }
    self.leave()
  }

  private func enter(
    _ body: (inout (values: [String], ends: [String], inside: Bool, overlapped: Bool)) -> Int
  ) -> Int {
    self.state.withLock { state in
      if state.inside { state.overlapped = true }
      state.inside = true
      return body(&state)
    }
  }

  private func leave() {
    self.state.withLock { $0.inside = false }
  }
}

@Suite("GRX writers, writeables and the buffered pipe")
struct GRXWriterTests {
  @Test("a writer of values writes them in order, then ends; it is finished after")
  func values() {
    let writer = GRXWriter(values: [1, 2, 3])
    let writeable = RecordingWriteable()
    writer.start(with: writeable)
    #expect(writeable.values == ["1", "2", "3"])
    #expect(writeable.ends == ["end"])
    #expect(writer.state == .finished)
  }

  @Test("the single handler is called exactly once: first value; error; or INTERNAL for no value")
  func singleHandler() {
    func run(_ writer: GRXWriter) -> [String] {
      let calls = LockedValue<[String]>([])
      writer.start(
        with: GRXHandlerWriteable(singleHandler: { value, error in
          let text =
            value.map { "value \($0)" }
            ?? "error \((error as? GRPCError).map { "\($0.code.rawValue) \($0.message)" } ?? "\(error!)")"
          calls.withLock { $0.append(text) }
        })
      )
      return calls.withLock { $0 }
    }
    #expect(run(GRXWriter(values: [1, 2])) == ["value 1"])
    let pipe = GRXBufferedPipe()
    pipe.writeValue(7)
    pipe.writesFinished(withError: TestError())
    #expect(run(pipe) == ["value 7"])
    #expect(
      run(GRXWriter(error: GRPCError(code: .unavailable, message: "down"))) == ["error 14 down"]
    )
    #expect(run(GRXWriter.empty()) == ["error 13 The writer finished without producing any value."])
  }

  @Test(
    "the generated methods' unary handler answers once, at the end: the error wins over a value"
  )
  func unaryHandler() {
    func run(_ writer: GRXWriter) -> [String] {
      let calls = LockedValue<[String]>([])
      writer.start(
        with: GRXHandlerWriteable.unaryHandler { (value: Int?, error: GRPCError?) in
          let text =
            value.map { "value \($0)" }
            ?? "error \(error.map { "\($0.code.rawValue) \($0.message)" } ?? "none")"
          calls.withLock { $0.append(text) }
        }
      )
      return calls.withLock { $0 }
    }
    #expect(run(GRXWriter(values: [1, 2])) == ["value 1"])
    let pipe = GRXBufferedPipe()
    pipe.writeValue(7)
    pipe.writesFinished(withError: GRPCError(code: .unknown, message: "failed after a response"))
    #expect(run(pipe) == ["error 2 failed after a response"])
    #expect(
      run(GRXWriter(error: TestError())) == ["error 2 The requests writer failed: TestError()"]
    )
    #expect(run(GRXWriter.empty()) == ["error 13 The server closed the call without a response"])
  }

  @Test("the event handler gets each value with done false, then done true exactly once, last")
  func eventHandler() {
    let events = LockedValue<[String]>([])
    GRXWriter(values: ["a", "b"]).start(
      with: GRXHandlerWriteable(eventHandler: { done, value, error in
        events.withLock {
          $0.append("\(done) \(value.map { "\($0)" } ?? "-") \(error == nil ? "ok" : "error")")
        }
      })
    )
    #expect(events.withLock { $0 } == ["false a ok", "false b ok", "true - ok"])
  }

  @Test("a pipe buffers what is written before start and propagates an error after the values")
  func pipeBuffersAndPropagates() {
    let pipe = GRXBufferedPipe()
    pipe.writeValue("early")
    let writeable = RecordingWriteable()
    pipe.start(with: writeable)
    pipe.writeValue("late")
    pipe.writesFinished(withError: GRPCError(code: .aborted, message: "stop"))
    pipe.writeValue("after the end")
    #expect(writeable.values == ["early", "late"])
    #expect(writeable.ends == ["stop"])
  }

  @Test("a pipe finished while paused delivers the rest, then the end, on resume")
  func finishWhilePaused() {
    let pipe = GRXBufferedPipe()
    let writeable = RecordingWriteable()
    pipe.start(with: writeable)
    pipe.state = .paused
    pipe.writeValue(1)
    pipe.writeValue(2)
    pipe.writesFinished(withError: nil)
    #expect(writeable.values.isEmpty && writeable.ends.isEmpty)
    pipe.state = .started
    #expect(writeable.values == ["1", "2"])
    #expect(writeable.ends == ["end"])
  }

  @Test("a writeable may pause the writer from inside its callback; resuming delivers the rest")
  func pauseFromCallback() {
    let writer = GRXWriter(values: [1, 2, 3, 4])
    let paused = LockedValue<GRXWriter?>(writer)
    let writeable = RecordingWriteable { _, count in
      if count == 2 { paused.withLock { $0 }?.state = .paused }
    }
    writer.start(with: writeable)
    #expect(writeable.values == ["1", "2"])
    #expect(writer.state == .paused)
    writer.state = .started
    #expect(writeable.values == ["1", "2", "3", "4"])
    #expect(writeable.ends == ["end"])
    paused.withLock { $0 = nil }
  }

  @Test("finish(withError:) ends a paused writer now; setting .finished stops it silently")
  func finishing() {
    let pipe = GRXBufferedPipe()
    let writeable = RecordingWriteable()
    pipe.start(with: writeable)
    pipe.state = .paused
    pipe.writeValue(1)
    pipe.finish(withError: GRPCError(code: .cancelled, message: "gone"))
    #expect(writeable.values.isEmpty)
    #expect(writeable.ends == ["gone"])

    let silent = GRXBufferedPipe()
    let quiet = RecordingWriteable()
    silent.start(with: quiet)
    silent.state = .finished
    silent.writeValue(1)
    silent.writesFinished(withError: nil)
    #expect(quiet.values.isEmpty && quiet.ends.isEmpty)
  }

  @Test(
    "a started or finished writer given to another writeable: FAILED_PRECONDITION, writer untouched"
  )
  func startOnce() {
    let writer = GRXWriter(values: [1])
    writer.start(with: RecordingWriteable())
    let second = RecordingWriteable()
    writer.start(with: second)
    #expect(second.values.isEmpty)
    #expect(
      second.ends == [
        "The writer has already finished: a GRXWriter can be started once; make a new one"
      ]
    )
  }

  @Test("a paused pipe holding values is freed with its writeable when released")
  func releasedWhilePaused() {
    weak var weakPipe: GRXBufferedPipe?
    weak var weakWriteable: RecordingWriteable?
    do {
      let pipe = GRXBufferedPipe()
      let writeable = RecordingWriteable()
      pipe.start(with: writeable)
      pipe.state = .paused
      for value in 0 ..< 100 { pipe.writeValue(value) }
      weakPipe = pipe
      weakWriteable = writeable
    }
    #expect(weakPipe == nil)
    #expect(weakWriteable == nil)
  }

  @Test("values written from many threads each arrive once, with no two callbacks overlapping")
  func concurrentWriters() {
    let pipe = GRXBufferedPipe()
    let writeable = RecordingWriteable()
    pipe.start(with: writeable)
    DispatchQueue.concurrentPerform(iterations: 8) { thread in
      for index in 0 ..< 500 {
        pipe.writeValue(thread * 1000 + index)
        if index % 100 == 0 {
          pipe.state = .paused
          pipe.state = .started
        }
      }
    }
    pipe.writesFinished(withError: nil)
    #expect(writeable.values.count == 4000)
    #expect(Set(writeable.values).count == 4000)
    #expect(writeable.ends == ["end"])
    #expect(!writeable.overlapped)
  }
}
