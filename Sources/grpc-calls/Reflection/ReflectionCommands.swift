internal import ArgumentParser
internal import Foundation
internal import GRPCCalls
internal import GRPCCallsReflection
internal import GRPCCore
internal import SwiftProtobuf

/// What `list` and `describe` share: the server and how to reach it.
struct ReflectionTarget: ParsableArguments {
  @Argument(help: "The server: host:port, or a target with a scheme (dns:///host:port).")
  var target: String

  @Flag(help: "Connect with TLS; the default is plaintext.")
  var tls = false

  @Option(help: "With --tls: the root certificates to trust, a PEM file; the system's by default.")
  var caFile: String?

  @Option(help: "Seconds each reflection call may take.")
  var timeout: Double = 10

  func client() throws -> GRPCReflectionClient {
    var options = GRPCCallOptions()
    options.transportType = self.tls ? .tls : .insecure
    options.timeout = self.timeout
    if let caFile = self.caFile {
      do {
        options.pemRootCertificates = try String(contentsOfFile: caFile, encoding: .utf8)
      } catch {
        throw ValidationError("cannot read \(caFile): \(error.localizedDescription)")
      }
    }
    return GRPCReflectionClient(host: self.target, callOptions: options)
  }
}

/// `grpc-calls list TARGET [SERVICE]`, as `grpcurl list`.
struct ListServices: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "list",
    abstract: "List a server's services, or one service's methods, through server reflection."
  )

  @OptionGroup var server: ReflectionTarget

  @Argument(help: "A service: list its methods instead.")
  var service: String?

  func run() async throws {
    let client = try self.server.client()
    if let service = self.service {
      let files: [Google_Protobuf_FileDescriptorProto]
      do {
        files = try await client.fileDescriptors(containingSymbol: GRPCProtoText.bare(service))
      } catch let error as GRPCError where error.code == .notFound {
        throw ReflectionFailure(
          "\(self.server.target) knows no service \(service) (NOT_FOUND: \(error.message))"
        )
      }
      guard let methods = GRPCProtoText(files: files).methods(of: service) else {
        throw ReflectionFailure("\(service) is not a service of \(self.server.target)")
      }
      for method in methods { Console.line(method) }
    } else {
      for service in try await client.listServices().sorted() { Console.line(service) }
    }
  }
}

/// `grpc-calls describe TARGET SYMBOL`, as `grpcurl describe`.
struct Describe: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract:
      "Print the definition of a service, method, message or enum, through server reflection."
  )

  @OptionGroup var server: ReflectionTarget

  @Argument(help: "The fully qualified name: grpc.testing.TestService, grpc.testing.SimpleRequest…")
  var symbol: String

  func run() async throws {
    let files = try await self.files(
      defining: GRPCProtoText.bare(self.symbol),
      client: self.server.client()
    )
    guard let text = GRPCProtoText(files: files).describe(self.symbol) else {
      throw ReflectionFailure("the server's files do not define \(self.symbol)")
    }
    Console.line(text)
  }

  /// The files that define `symbol`. Some servers (grpcio) find no file for a method's name:
  /// then the file of the service the method belongs to, as grpcurl does.
  private func files(
    defining symbol: String,
    client: GRPCReflectionClient
  ) async throws -> [Google_Protobuf_FileDescriptorProto] {
    do {
      return try await client.fileDescriptors(containingSymbol: symbol)
    } catch let error as GRPCError where error.code == .notFound {
      if let dot = symbol.lastIndex(of: "."),
        let files = try? await client.fileDescriptors(containingSymbol: String(symbol[..<dot]))
      {
        return files
      }
      throw ReflectionFailure(
        "\(self.server.target) knows no symbol \(symbol) (NOT_FOUND: \(error.message))"
      )
    }
  }
}

/// What `list` or `describe` could not do: printed as `Error: …`, exit status 1.
struct ReflectionFailure: Error, CustomStringConvertible {
  let description: String

  init(_ description: String) {
    self.description = description
  }
}
