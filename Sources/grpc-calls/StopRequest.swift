internal import Dispatch
internal import Foundation
internal import Synchronization

/// A request to stop early, made by SIGINT or SIGTERM while a command runs.
///
/// A command that checks it between units of work can end cleanly and still print its summary,
/// which lets a script end a run whose length it cannot know in advance (`interop/balance.sh`
/// stops `load` once a restarted server has taken calls again). A second signal ends the
/// process at once, as the default action would have.
final class StopRequest: Sendable {
  /// The signal that asked to stop; 0 while none has.
  private let signal = Atomic<Int32>(0)

  /// The signal that asked to stop, if one has.
  var signalNumber: Int32? {
    let number = self.signal.load(ordering: .relaxed)
    return number == 0 ? nil : number
  }

  private init() {}

  /// Runs `body` with SIGINT and SIGTERM turned into a stop request, then restores what they
  /// did before.
  static func whileRunning<Result>(
    _ body: (StopRequest) async throws -> Result
  ) async rethrows -> Result {
    let request = StopRequest()
    let signals = [SIGINT, SIGTERM]
    // The default action would end the process before a summary prints.
    let previous = signals.map { Foundation.signal($0, SIG_IGN) }
    let sources = signals.map { number in
      let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
      source.setEventHandler {
        let (exchanged, _) = request.signal.compareExchange(
          expected: 0,
          desired: number,
          ordering: .relaxed
        )
        if !exchanged {
          Foundation.exit(128 + number)
        }
      }
      source.resume()
      return source
    }
    defer {
      for source in sources { source.cancel() }
      for (number, action) in zip(signals, previous) { _ = Foundation.signal(number, action) }
    }
    return try await body(request)
  }
}
