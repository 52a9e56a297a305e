// swift-tools-version:6.1
// Apps whose clients grpc-calls' build plugin generates from .proto files at build time.
//
// - RouteGuide: messages and client from route_guide.proto with the plugin alone (the README's
//   quick start); calls a RouteGuide server (`--port`) in all four shapes, callback and async.
// - GeneratedClient: a client only, with its messages from another module and gRPC
//   Objective-C's v1 methods too; starts the interop server in-process and calls it.
// - StandardProtos: protos as real services have them, with no config file (well-known types in
//   rpcs and messages, a proto without services, imports across folders, v1 and v1alpha
//   reflection.proto, keywords as names); it only has to build.
// - AppTests: an app's tests with GRPCCallsTestSupport (a real server, a network that breaks).
import PackageDescription

let package = Package(
  name: "Examples",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "grpc-calls", path: ".."),
    .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
    // GRPCCore's Metadata: the headers and trailers of a call.
    .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
  ],
  targets: [
    .executableTarget(
      name: "RouteGuide",
      dependencies: [
        .product(name: "GRPCCalls", package: "grpc-calls"),
        .product(name: "GRPCProtoCalls", package: "grpc-calls"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)],
      plugins: [.plugin(name: "GRPCCallsPlugin", package: "grpc-calls")]
    ),
    .executableTarget(
      name: "GeneratedClient",
      dependencies: [
        .product(name: "GRPCCalls", package: "grpc-calls"),
        .product(name: "GRPCProtoCalls", package: "grpc-calls"),
        // The v1 methods ("v1Compatibility": true).
        .product(name: "GRPCLegacy", package: "grpc-calls"),
        // The grpc.testing message types and the interop server to talk to.
        .product(name: "GRPCCallsTestSupport", package: "grpc-calls"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)],
      plugins: [.plugin(name: "GRPCCallsPlugin", package: "grpc-calls")]
    ),
    .target(
      name: "StandardProtos",
      dependencies: [
        .product(name: "GRPCCalls", package: "grpc-calls"),
        .product(name: "GRPCProtoCalls", package: "grpc-calls"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)],
      plugins: [.plugin(name: "GRPCCallsPlugin", package: "grpc-calls")]
    ),
    .testTarget(
      name: "AppTests",
      dependencies: [
        .product(name: "GRPCCalls", package: "grpc-calls"),
        .product(name: "GRPCCallsTestSupport", package: "grpc-calls"),
      ],
      swiftSettings: [.swiftLanguageMode(.v6)]
    ),
  ]
)
