public import Dispatch
public import GRPCCalls
public import GRPCCore
public import GRPCProtoCalls
public import SwiftProtobuf

/// A proto response handler that records what a call delivers, for checks and for waiting.
public final class ProtoCallRecorder: GRPCProtoResponseHandler {
  public let dispatchQueue = DispatchQueue(label: "grpc-calls.proto-recorder")
  private let state = LockedValue(State())
  private let onMessage: (@Sendable (Int) -> Void)?

  private struct State {
    var headers: Metadata?
    var messages: [any SwiftProtobuf.Message] = []
    var close: CallRecorder.Close?
    var closes = 0
    var writes = 0
  }

  /// - Parameter onMessage: Runs inside each message callback with the message's index.
  public init(onMessage: (@Sendable (Int) -> Void)? = nil) {
    self.onMessage = onMessage
  }

  public var initialMetadata: Metadata? { self.state.withLock { $0.headers } }
  public var messages: [any SwiftProtobuf.Message] { self.state.withLock { $0.messages } }
  public var closeCount: Int { self.state.withLock { $0.closes } }
  /// How many `didWriteMessage` callbacks ran.
  public var writeCount: Int { self.state.withLock { $0.writes } }
  /// The close, once delivered.
  public var close: CallRecorder.Close? { self.state.withLock { $0.close } }

  /// The messages, as `type`; a message of another type is a failure.
  public func messages<M: SwiftProtobuf.Message>(as type: M.Type) throws -> [M] {
    try self.messages.map { message in
      guard let typed = message as? M else {
        throw InteropCaseFailure("expected a \(M.self), got \(Swift.type(of: message))")
      }
      return typed
    }
  }

  public func didReceiveInitialMetadata(_ initialMetadata: Metadata) {
    self.state.withLock { $0.headers = initialMetadata }
  }

  public func didReceiveProtoMessage(_ message: any SwiftProtobuf.Message) {
    let index = self.state.withLock { state in
      state.messages.append(message)
      return state.messages.count - 1
    }
    self.onMessage?(index)
  }

  public func didClose(trailingMetadata: Metadata?, error: GRPCError?) {
    self.state.withLock {
      $0.close = (trailingMetadata, error)
      $0.closes += 1
    }
  }

  public func didWriteMessage() {
    self.state.withLock { $0.writes += 1 }
  }

  /// Waits until `condition` holds, or `seconds` pass; returns whether it held.
  @discardableResult
  public func wait(
    upTo seconds: Double = CloseWait.seconds,
    until condition: @Sendable (ProtoCallRecorder) -> Bool
  ) async -> Bool {
    await CloseWait.poll(upTo: seconds) { condition(self) }
  }

  /// Waits for the close and returns it, or `nil` if it did not come within `seconds`.
  public func waitForClose(upTo seconds: Double = CloseWait.seconds) async -> CallRecorder.Close? {
    await self.wait(upTo: seconds) { $0.close != nil }
    return self.close
  }

  /// Waits for the close and checks it carries `code` (nil: success) and `message`.
  @discardableResult
  public func expectClose(
    _ code: RPCError.Code?,
    message: String? = nil
  ) async throws -> CallRecorder.Close {
    guard let close = await self.waitForClose() else {
      throw InteropCaseFailure("the call did not close within \(Int(CloseWait.seconds)) s")
    }
    switch (code, close.error) {
    case (nil, nil): break
    case (nil, let error?): throw error
    case (let code?, nil): throw InteropCaseFailure("expected status \(code), the call succeeded")
    case (let code?, let error?):
      guard error.code == code else {
        throw InteropCaseFailure("expected status \(code), got \(error)")
      }
      if let message, error.message != message {
        throw InteropCaseFailure(
          "expected message \(message.debugDescription), got \(error.message.debugDescription)"
        )
      }
    }
    guard self.closeCount == 1 else { throw InteropCaseFailure("\(self.closeCount) closes") }
    return close
  }
}
