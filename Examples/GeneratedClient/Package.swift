// swift-tools-version:6.1
// An app that gets its client from .proto files at build time, with grpc-calls' build plugin.
// `swift run` here starts the interop server in-process and calls it through the generated code.
import PackageDescription

let package = Package(
  name: "GeneratedClient",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "grpc-calls", path: "../..")
  ],
  targets: [
    .executableTarget(
      name: "GeneratedClient",
      dependencies: [
        .product(name: "GRPCCalls", package: "grpc-calls"),
        .product(name: "GRPCProtoCalls", package: "grpc-calls"),
        // The grpc.testing message types and the interop server to talk to.
        .product(name: "GRPCCallsInterop", package: "grpc-calls"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)],
      plugins: [.plugin(name: "GRPCCallsPlugin", package: "grpc-calls")]
    )
  ]
)
