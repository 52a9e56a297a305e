public import Foundation
public import GRPCCalls
internal import GRPCCore
internal import GRPCProtoCalls
public import SwiftProtobuf

/// A client of gRPC server reflection (`grpc.reflection.v1.ServerReflection`): the services a
/// server offers and the `.proto` definitions behind them, as grpcurl and Postman read them.
///
/// ```swift
/// let reflection = GRPCReflectionClient(host: "127.0.0.1:50051", callOptions: options)
/// for service in try await reflection.listServices() { print(service) }
/// let files = try await reflection.fileDescriptors(containingSymbol: "grpc.testing.TestService")
/// ```
///
/// Each method is one conversation on one `ServerReflectionInfo` stream: a question, then one
/// more for each file a file depends on that the server has not sent yet. A server that does
/// not implement v1 (grpcio-reflection and older grpc-go serve only v1alpha) is asked again over
/// v1alpha, whose messages are the same on the wire. A conversation whose call options set no
/// timeout gets ``defaultTimeout``.
public struct GRPCReflectionClient: Sendable {
  private let host: String
  private let callOptions: GRPCCallOptions?
  private let channelPool: GRPCChannelPool

  /// The deadline, in seconds, of a conversation whose options set none: a server that stops
  /// answering must not hold the caller for ever.
  public static let defaultTimeout: TimeInterval = 30
  /// The most files one conversation takes: a server that keeps naming new dependencies must
  /// not keep the caller asking.
  static let mostFiles = 10_000

  /// Creates a client of the reflection service of `host`.
  ///
  /// - Parameters:
  ///   - host: The server: `name[:port]` or a target with a scheme, as for any service.
  ///   - callOptions: The options of calls that do not bring their own.
  ///   - channelPool: The pool to take channels from; the shared pool by default.
  public init(
    host: String,
    callOptions: GRPCCallOptions? = nil,
    channelPool: GRPCChannelPool = .shared
  ) {
    self.host = host
    self.callOptions = callOptions
    self.channelPool = channelPool
  }

  /// The fully qualified names of the services the server offers, as it lists them
  /// (`grpc.testing.TestService`, and usually the reflection service itself).
  ///
  /// - Throws: `GRPCError`: `UNIMPLEMENTED` when the server serves no reflection, the error the
  ///   server answered with, or the call's own failure.
  public func listServices(callOptions: GRPCCallOptions? = nil) async throws -> [String] {
    try await self.converse(callOptions) { conversation in
      var request = ReflectionRequest()
      request.listServices = ""
      let response = try await conversation.ask(request)
      guard case .listServicesResponse(let list)? = response.messageResponse else {
        throw Self.unexpected(response, asked: "the list of services")
      }
      return list.service.map(\.name)
    }
  }

  /// The file that defines `symbol` (a service, method, message, enum or extension, fully
  /// qualified: `grpc.testing.TestService`), with every file it depends on that the server has,
  /// dependencies first. (A dependency the server answers `NOT_FOUND` for, such as one grpc-go
  /// leaves out, is left out.)
  ///
  /// - Throws: `GRPCError`: `NOT_FOUND` when the server knows no such symbol (its own answer),
  ///   `UNIMPLEMENTED` when it serves no reflection, `INTERNAL` when it sends a descriptor that
  ///   does not decode, or the call's own failure.
  public func fileDescriptors(
    containingSymbol symbol: String,
    callOptions: GRPCCallOptions? = nil
  ) async throws -> [Google_Protobuf_FileDescriptorProto] {
    var request = ReflectionRequest()
    request.fileContainingSymbol = symbol
    return try await self.files(answering: request, callOptions)
  }

  /// The file named `filename` (as the server knows it: `grpc/testing/test.proto`), with every
  /// file it depends on, dependencies first.
  ///
  /// - Throws: As ``fileDescriptors(containingSymbol:callOptions:)``.
  public func fileDescriptors(
    filename: String,
    callOptions: GRPCCallOptions? = nil
  ) async throws -> [Google_Protobuf_FileDescriptorProto] {
    var request = ReflectionRequest()
    request.fileByFilename = filename
    return try await self.files(answering: request, expecting: filename, callOptions)
  }

  /// The files the answer to `request` holds, and those they depend on, asked for in turn on
  /// the same stream.
  private func files(
    answering request: ReflectionRequest,
    expecting filename: String? = nil,
    _ callOptions: GRPCCallOptions?
  ) async throws -> [Google_Protobuf_FileDescriptorProto] {
    try await self.converse(callOptions) { conversation in
      var files = FileSet()
      try files.add(try await conversation.ask(request), expecting: filename)
      while let missing = files.missingDependency {
        guard files.count < Self.mostFiles else {
          throw GRPCError(
            code: .internalError,
            message: "The reflection server named more than \(Self.mostFiles) files for one symbol"
          )
        }
        var next = ReflectionRequest()
        next.fileByFilename = missing
        do {
          try files.add(try await conversation.ask(next), expecting: missing)
        } catch let answer as ServerAnswer where answer.error.code == .notFound {
          files.markUnavailable(missing)
        }
      }
      return files.dependenciesFirst
    }
  }

  /// Runs `body` on a conversation over v1, or over v1alpha when the server does not
  /// implement v1.
  ///
  /// Only the call's own `UNIMPLEMENTED` means "no such service": an `ErrorResponse` the server
  /// answers a question with (``ServerAnswer``) is its answer, whatever its code.
  private func converse<Result: Sendable>(
    _ callOptions: GRPCCallOptions?,
    _ body: (ReflectionConversation) async throws -> Result
  ) async throws -> Result {
    do {
      do {
        return try await self.converse(package: "grpc.reflection.v1", callOptions, body)
      } catch let error as GRPCError where error.code == .unimplemented {
        do {
          return try await self.converse(package: "grpc.reflection.v1alpha", callOptions, body)
        } catch let alpha as GRPCError where alpha.code == .unimplemented {
          var explained = alpha
          explained.message =
            "The server does not serve reflection (grpc.reflection.v1 nor v1alpha: \(alpha.message)); "
            + "grpcio adds it with grpcio-reflection, grpc-go with google.golang.org/grpc/reflection"
          throw explained
        }
      }
    } catch let answer as ServerAnswer {
      throw answer.error
    }
  }

  private func converse<Result: Sendable>(
    package: String,
    _ callOptions: GRPCCallOptions?,
    _ body: (ReflectionConversation) async throws -> Result
  ) async throws -> Result {
    let service = GRPCProtoService(
      host: self.host,
      packageName: package,
      serviceName: "ServerReflection",
      callOptions: self.callOptions,
      channelPool: self.channelPool
    )
    var options = callOptions ?? service.callOptions
    if options.timeout <= 0 {
      options.timeout = Self.defaultTimeout
    }
    let (requests, questions) = AsyncStream.makeStream(of: ReflectionRequest.self)
    defer { questions.finish() }
    return try await service.bidirectionalStreaming(
      method: "ServerReflectionInfo",
      requestType: ReflectionRequest.self,
      responseType: ReflectionResponse.self,
      callOptions: options
    ) { writer in
      for await request in requests {
        try await writer.write(request)
      }
    } body: { responses in
      // Once the answers are in, the call ends (cancelled if the server has not closed it).
      try await body(
        ReflectionConversation(questions: questions, answers: responses.makeAsyncIterator())
      )
    }
  }

  static func unexpected(_ response: ReflectionResponse, asked: String) -> GRPCError {
    GRPCError(
      code: .internalError,
      message:
        "The reflection server answered a request for \(asked) with \(String(describing: response.messageResponse))"
    )
  }
}

typealias ReflectionRequest = Grpc_Reflection_V1_ServerReflectionRequest
typealias ReflectionResponse = Grpc_Reflection_V1_ServerReflectionResponse

/// One `ServerReflectionInfo` stream, used by one task: each question waits for its answer.
final class ReflectionConversation {
  private let questions: AsyncStream<ReflectionRequest>.Continuation
  private var answers: GRPCResponseStream<ReflectionResponse>.AsyncIterator

  fileprivate init(
    questions: AsyncStream<ReflectionRequest>.Continuation,
    answers: GRPCResponseStream<ReflectionResponse>.AsyncIterator
  ) {
    self.questions = questions
    self.answers = answers
  }

  /// The server's answer to `request`.
  ///
  /// - Throws: ``ServerAnswer`` with the code and message of the server's `ErrorResponse`, or
  ///   `GRPCError` `INTERNAL` when the server ended the stream without an answer.
  func ask(_ request: ReflectionRequest) async throws -> ReflectionResponse {
    self.questions.yield(request)
    guard let response = try await self.answers.next() else {
      throw GRPCError(
        code: .internalError,
        message: "The reflection server ended the stream without answering"
      )
    }
    if case .errorResponse(let error)? = response.messageResponse {
      let code = Status.Code(rawValue: Int(error.errorCode)).flatMap(RPCError.Code.init) ?? .unknown
      throw ServerAnswer(error: GRPCError(code: code, message: error.errorMessage))
    }
    return response
  }
}

/// An `ErrorResponse` the server answered a question with, kept apart from the call's own
/// failures until the conversation is over (``GRPCReflectionClient`` throws its `error`).
struct ServerAnswer: Error {
  let error: GRPCError
}
