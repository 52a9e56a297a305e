internal import GRPCCalls
public import Logging

/// A swift-log handler that keeps every record, for checking what the library logged.
public final class CapturedLogs: Sendable {
  public struct Record: Sendable {
    public var level: Logger.Level
    public var message: String
    public var metadata: [String: String]
  }

  private let records = LockedValue<[Record]>([])

  public init() {}

  public var all: [Record] { self.records.withLock { $0 } }

  /// A logger whose records land here.
  public var logger: Logger {
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
