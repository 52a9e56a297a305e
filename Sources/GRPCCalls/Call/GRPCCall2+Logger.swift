public import Logging

extension GRPCCall2 {
  private static let _logger = LockedValue(Logger(label: "grpc-calls"))

  /// Where calls report misuse: a second ``start()``, a write after ``finish()``, a call
  /// released without ``start()`` while it held writes. One warning per kind per call.
  ///
  /// Labelled `grpc-calls` and handled by swift-log's `LoggingSystem` unless you set another.
  /// Channels log through ``GRPCChannelPool/Config/logger``.
  public static var logger: Logger {
    get { Self._logger.withLock { $0 } }
    set { Self._logger.withLock { $0 = newValue } }
  }
}
