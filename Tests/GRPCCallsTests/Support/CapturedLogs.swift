import Logging
import Synchronization

/// A swift-log handler that keeps every record, for checking what the library logged.
final class CapturedLogs: Sendable {
  struct Record: Sendable {
    var level: Logger.Level
    var message: String
    var metadata: [String: String]
  }

  private let records = Mutex<[Record]>([])

  var all: [Record] { self.records.withLock { $0 } }

  /// A logger whose records land here.
  var logger: Logger {
    Logger(label: "grpc-calls.test") { _ in Handler(logs: self) }
  }

  fileprivate func add(_ record: Record) {
    self.records.withLock { $0.append(record) }
  }

  private struct Handler: LogHandler {
    let logs: CapturedLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { self.metadata[key] }
      set { self.metadata[key] = newValue }
    }

    func log(event: LogEvent) {
      let merged = self.metadata.merging(event.metadata ?? [:]) { $1 }
      self.logs.add(
        Record(
          level: event.level,
          message: "\(event.message)",
          metadata: merged.mapValues { "\($0)" }
        )
      )
    }
  }
}
