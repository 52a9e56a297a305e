/// Where a ``GRXWriter`` is in its life (gRPC Objective-C's `GRXWriterState`).
///
/// ```
/// notStarted ──start(with:)──▶ started ◀──state = .started──┐
///                                 │ ──state = .paused──▶ paused
///                                 ▼                         │
///                             finished ◀─────────────────────┘
/// ```
///
/// A writer finishes when it has written everything, when ``GRXWriter/finish(withError:)`` is
/// called, or when its owner sets `state = .finished`, which stops every callback at once.
public enum GRXWriterState: Sendable, Hashable {
  /// Not started yet: nothing is written until ``GRXWriter/start(with:)``.
  case notStarted
  /// Writing values to its writeable.
  case started
  /// Holding values back until the state is set to `.started` again.
  case paused
  /// Done: the writeable got (or, when finished by hand, will never get) its last callback.
  case finished
}
