/// The requests an interceptor passed on while it handled one burst of events, held until the
/// burst is over so that they reach the next element together.
///
/// A start followed by writes and a finish to the same element travels as one
/// `start(requestOptions:callOptions:writes:finish:)`. That matters at the bottom of the chain:
/// the transport sends a unary request with its END_STREAM in one write only when it sees the
/// finish before it opens the stream. Passed one by one, a queued interceptor's start opened
/// the stream while its message and finish were still on the way. Everything else is delivered
/// as it came, in order.
struct RequestBatch: Sendable {
  enum Request: Sendable {
    case start(GRPCRequestOptions, GRPCCallOptions)
    case write(any Sendable)
    case finish
    case cancel
    case receiveNextMessages(Int)
  }

  private var entries: [(link: any RequestLink, request: Request)] = []

  var isEmpty: Bool { self.entries.isEmpty }

  mutating func append(_ request: Request, to link: any RequestLink) {
    self.entries.append((link, request))
  }

  /// Drops what was held for `link`: the element was discarded before the batch went out.
  mutating func removeAll(for link: any RequestLink) {
    self.entries.removeAll { $0.link === link }
  }

  /// Delivers every request in order, a start with the writes and finish that followed it.
  func deliver() {
    var index = self.entries.startIndex
    while index < self.entries.endIndex {
      let (link, request) = self.entries[index]
      index += 1
      switch request {
      case .start(let requestOptions, let callOptions):
        var writes: [any Sendable] = []
        var finish = false
        scan: while index < self.entries.endIndex, self.entries[index].link === link {
          switch self.entries[index].request {
          case .write(let message):
            writes.append(message)
            index += 1
          case .finish:
            finish = true
            index += 1
            break scan
          default:
            break scan
          }
        }
        link.start(
          requestOptions: requestOptions,
          callOptions: callOptions,
          writes: writes,
          finish: finish
        )
      case .write(let message):
        link.write(message)
      case .finish:
        link.finish()
      case .cancel:
        link.cancel()
      case .receiveNextMessages(let count):
        link.receiveNextMessages(count)
      }
    }
  }
}
