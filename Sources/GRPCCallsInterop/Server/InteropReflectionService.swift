internal import Foundation
internal import GRPCCallsReflection
public import GRPCCore
internal import GRPCProtobuf
internal import SwiftProtobuf

/// The interop server's server reflection, `grpc.reflection.v1.ServerReflection` and its
/// predecessor `grpc.reflection.v1alpha.ServerReflection` (the same messages on the wire),
/// answering as grpc-go's and grpcio's services do: the services it lists, a file by name or by
/// a symbol it defines with every file that file imports, and `NOT_FOUND` as an error response
/// (the stream goes on) for what it does not know.
///
/// grpc-swift-2 ships no reflection service in the packages this project builds on, so the
/// interop server answers from the descriptors protoc wrote for it (`InteropDescriptors`).
public struct InteropReflectionService: RegistrableRPCService {
  /// Request metadata on a v1 call: the server answers it `UNIMPLEMENTED`, as a server that
  /// serves only v1alpha (grpc-go before 1.57) does.
  public static let v1AlphaOnlyKey = "x-grpc-calls-reflection-v1alpha-only"

  private typealias Request = Grpc_Reflection_V1_ServerReflectionRequest
  private typealias Response = Grpc_Reflection_V1_ServerReflectionResponse

  private static let versions = [
    "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection",
  ]

  private let index: InteropDescriptorIndex
  private let services: [String]

  /// A reflection service that lists `services` (and itself) and describes the interop files.
  init(listing services: [String]) throws {
    self.index = try InteropDescriptorIndex.interop()
    self.services = (services + Self.versions).sorted()
  }

  public func registerMethods<Transport: ServerTransport>(with router: inout RPCRouter<Transport>) {
    for service in Self.versions {
      router.registerHandler(
        forMethod: MethodDescriptor(fullyQualifiedService: service, method: "ServerReflectionInfo"),
        deserializer: ProtobufDeserializer<Request>(),
        serializer: ProtobufSerializer<Response>()
      ) { request, _ in
        let v1AlphaOnly = request.metadata[Self.v1AlphaOnlyKey].contains(where: { _ in true })
        if service == Self.versions[0], v1AlphaOnly {
          throw RPCError(
            code: .unimplemented,
            message: "Not implemented here (\(Self.v1AlphaOnlyKey))"
          )
        }
        // A server that serves only v1alpha does not list v1.
        let listed = v1AlphaOnly ? self.services.filter { $0 != Self.versions[0] } : self.services
        return StreamingServerResponse { writer in
          for try await question in request.messages {
            try await writer.write(self.answer(question, listing: listed))
          }
          return [:]
        }
      }
    }
  }

  /// The answer to one request of the conversation.
  private func answer(_ request: Request, listing services: [String]) -> Response {
    var response = Response()
    response.validHost = request.host
    response.originalRequest = request
    switch request.messageRequest {
    case .listServices:
      response.listServicesResponse = .with { list in
        list.service = services.map { name in .with { $0.name = name } }
      }
    case .fileByFilename(let name):
      response.messageResponse = self.files(named: name, missing: "file '\(name)'")
    case .fileContainingSymbol(let symbol):
      let file = self.index.file(definingSymbol: symbol) ?? ""
      response.messageResponse = self.files(named: file, missing: "symbol '\(symbol)'")
    case .fileContainingExtension(let wanted):
      let file =
        self.index.file(extending: wanted.containingType, number: wanted.extensionNumber) ?? ""
      response.messageResponse = self.files(
        named: file,
        missing: "extension \(wanted.extensionNumber) of '\(wanted.containingType)'"
      )
    case .allExtensionNumbersOfType(let type):
      if self.index.isMessage(type) {
        response.allExtensionNumbersResponse = .with {
          $0.baseTypeName = type
          $0.extensionNumber = self.index.extensionNumbers(of: type)
        }
      } else {
        response.messageResponse = Self.notFound("message '\(type)'")
      }
    case nil:
      response.errorResponse = .with {
        $0.errorCode = Int32(RPCError.Code.invalidArgument.rawValue)
        $0.errorMessage = "The request asks nothing"
      }
    }
    return response
  }

  /// File `name` and its imports, or `NOT_FOUND` naming `missing`.
  private func files(named name: String, missing: String) -> Response.OneOf_MessageResponse {
    guard let files = self.index.fileWithImports(named: name) else { return Self.notFound(missing) }
    do {
      let encoded: [Data] = try files.map { try $0.serializedBytes() }
      return .fileDescriptorResponse(.with { $0.fileDescriptorProto = encoded })
    } catch {
      return .errorResponse(
        .with {
          $0.errorCode = Int32(RPCError.Code.internalError.rawValue)
          $0.errorMessage = "Cannot encode the descriptors of '\(name)': \(error)"
        }
      )
    }
  }

  private static func notFound(_ what: String) -> Response.OneOf_MessageResponse {
    .errorResponse(
      .with {
        $0.errorCode = Int32(RPCError.Code.notFound.rawValue)
        $0.errorMessage = "Unknown \(what)"
      }
    )
  }
}
