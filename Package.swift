// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
  .swiftLanguageMode(.v6),
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("InternalImportsByDefault"),
  .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
  name: "grpc-calls",
  platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
  products: [
    .library(name: "GRPCCalls", targets: ["GRPCCalls"]),
    .library(name: "GRPCProtoCalls", targets: ["GRPCProtoCalls"]),
    .library(name: "GRPCLegacy", targets: ["GRPCLegacy"]),
    .library(name: "GRPCCallsInterceptors", targets: ["GRPCCallsInterceptors"]),
    // A client of the standard health service, grpc.health.v1.Health.
    .library(name: "GRPCCallsHealth", targets: ["GRPCCallsHealth"]),
    // A client of server reflection, grpc.reflection.v1 (and v1alpha).
    .library(name: "GRPCCallsReflection", targets: ["GRPCCallsReflection"]),
    // Real peers and network faults for the tests of apps that make gRPC calls: the interop
    // TestService (the GRPCCallsInterop target, which it re-exports) and a fault proxy.
    .library(name: "GRPCCallsTestSupport", targets: ["GRPCCallsTestSupport"]),
    .executable(name: "grpc-calls", targets: ["grpc-calls"]),
    .executable(name: "protoc-gen-grpc-calls", targets: ["protoc-gen-grpc-calls"]),
    .library(name: "GRPCCallsCodeGen", targets: ["GRPCCallsCodeGen"]),
    .plugin(name: "GRPCCallsPlugin", targets: ["GRPCCallsPlugin"]),
  ],
  dependencies: [
    .package(url: "https://github.com/grpc/grpc-swift-2.git", from: "2.4.3"),
    .package(url: "https://github.com/grpc/grpc-swift-nio-transport.git", from: "2.9.2"),
    .package(url: "https://github.com/grpc/grpc-swift-protobuf.git", from: "2.4.1"),
    .package(url: "https://github.com/apple/swift-protobuf.git", from: "1.39.0"),
    .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
    .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
    .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift.git", from: "0.2.0"),
    // The CLI only: the demo's and the bench's metrics backend.
    .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    // Documentation only: `swift package generate-documentation` (scripts/build-docs.sh).
    .package(url: "https://github.com/swiftlang/swift-docc-plugin.git", from: "1.5.0"),
    // The connection handlers that read HTTP/2 frames; in tests, peers that are not gRPC
    // servers (HTTP/2 answering 404 or HTML).
    .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
    // Tests only: generated bad input.
    .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
    // The check of the server certificate's name; in tests, certificates made at test time.
    .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
    .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
  ],
  targets: [
    // What apps give a call (hosts, method paths, metadata, channel arguments), checked with no
    // network code, so that the fuzz target builds in a minute.
    .target(
      name: "GRPCCallsInput",
      dependencies: [
        .product(name: "GRPCCore", package: "grpc-swift-2")
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "GRPCCalls",
      dependencies: [
        .target(name: "GRPCCallsInput"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
        // RetryInfo in a rich status, which retries and the token refresh wait for.
        .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
        .product(name: "Logging", package: "swift-log"),
        // The pool's connection and call counts.
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHPACK", package: "swift-nio-http2"),
        .product(name: "NIOHTTP2", package: "swift-nio-http2"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "NIOTLS", package: "swift-nio"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
        .product(name: "X509", package: "swift-certificates"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "GRPCProtoCalls",
      dependencies: [
        .target(name: "GRPCCalls"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        // Rich error details: google.rpc.Status and its ErrorDetails.
        .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "GRPCLegacy",
      dependencies: [
        .target(name: "GRPCCalls"),
        .target(name: "GRPCProtoCalls"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "GRPCCallsInterceptors",
      dependencies: [
        .target(name: "GRPCCalls"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "GRPCCallsHealth",
      dependencies: [
        .target(name: "GRPCCalls"),
        .target(name: "GRPCProtoCalls"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "GRPCCallsReflection",
      dependencies: [
        .target(name: "GRPCCalls"),
        .target(name: "GRPCProtoCalls"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "GRPCCallsCodeGen",
      dependencies: [
        .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf")
      ],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "protoc-gen-grpc-calls",
      dependencies: [
        .target(name: "GRPCCallsCodeGen"),
        .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .plugin(
      name: "GRPCCallsPlugin",
      capability: .buildTool(),
      dependencies: [
        .target(name: "protoc-gen-grpc-calls"),
        .product(name: "protoc-gen-swift", package: "swift-protobuf"),
      ]
    ),
    .target(
      name: "GRPCCallsInterop",
      dependencies: [
        .target(name: "GRPCCalls"),
        .target(name: "GRPCProtoCalls"),
        // The interop case `health`, and the health service of the interop server.
        .target(name: "GRPCCallsHealth"),
        // The messages of the interop server's reflection service.
        .target(name: "GRPCCallsReflection"),
        .target(name: "GRPCLegacy"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
        .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
        .product(name: "GRPCInProcessTransport", package: "grpc-swift-2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        .product(name: "NIOCore", package: "swift-nio"),
      ],
      exclude: ["Generated/README.md", "Generated/STAMP"],
      swiftSettings: swiftSettings
    ),
    .executableTarget(
      name: "grpc-calls",
      dependencies: [
        .target(name: "GRPCCallsTestSupport"),
        .target(name: "GRPCCalls"),
        .target(name: "GRPCCallsInterceptors"),
        .target(name: "GRPCProtoCalls"),
        .target(name: "GRPCCallsInterop"),
        // list and describe.
        .target(name: "GRPCCallsReflection"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
        .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        .product(name: "Histogram", package: "hdrhistogram-swift"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "InMemoryLogging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
      ],
      swiftSettings: swiftSettings
    ),
    // libFuzzer target over GRPCCallsInput (scripts/fuzz.sh); a plain build replays inputs.
    .executableTarget(
      name: "grpc-calls-fuzz",
      dependencies: [
        .target(name: "GRPCCallsInput"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
      ],
      swiftSettings: swiftSettings
    ),
    .target(
      name: "GRPCCallsTestSupport",
      dependencies: [
        .target(name: "GRPCCalls"),
        .target(name: "GRPCCallsInterop"),
        .target(name: "GRPCLegacy"),
        .target(name: "GRPCProtoCalls"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "GRPCProtoCallsTests",
      dependencies: [
        .target(name: "GRPCCalls"),
        .target(name: "GRPCProtoCalls"),
        .target(name: "GRPCCallsInterop"),
        .target(name: "GRPCCallsTestSupport"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
        .product(name: "GRPCProtobuf", package: "grpc-swift-protobuf"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "GRPCCallsTests",
      dependencies: [
        .target(name: "GRPCCalls"),
        .target(name: "GRPCCallsInput"),
        // Interceptors see v1 calls as they see v2 ones (the global registry is this suite's).
        .target(name: "GRPCLegacy"),
        .target(name: "GRPCProtoCalls"),
        .target(name: "GRPCCallsTestSupport"),
        .target(name: "GRPCCallsInterop"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
        .product(name: "X509", package: "swift-certificates"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "SwiftASN1", package: "swift-asn1"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "MetricsTestKit", package: "swift-metrics"),
        .product(name: "GRPCInProcessTransport", package: "grpc-swift-2"),
        .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "NIOHTTP2", package: "swift-nio-http2"),
        .product(name: "NIOHPACK", package: "swift-nio-http2"),
        // BoringSSL's reasons in a failed handshake (CoreFailureCanaryTests).
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "PropertyBased", package: "swift-property-based"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "GRPCCallsHealthTests",
      dependencies: [
        .target(name: "GRPCCallsHealth"),
        .target(name: "GRPCCalls"),
        .target(name: "GRPCCallsInterop"),
        .target(name: "GRPCCallsTestSupport"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "GRPCCallsReflectionTests",
      dependencies: [
        .target(name: "GRPCCallsReflection"),
        .target(name: "GRPCCalls"),
        .target(name: "GRPCCallsInterop"),
        .target(name: "GRPCCallsTestSupport"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "GRPCLegacyTests",
      dependencies: [
        .target(name: "GRPCLegacy"),
        .target(name: "GRPCCalls"),
        .target(name: "GRPCCallsInterop"),
        .target(name: "GRPCCallsTestSupport"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "GRPCCallsInterceptorsTests",
      dependencies: [
        .target(name: "GRPCCallsInterceptors"),
        .target(name: "GRPCCalls"),
        .target(name: "GRPCProtoCalls"),
        .target(name: "GRPCCallsInterop"),
        .target(name: "GRPCCallsTestSupport"),
        .product(name: "GRPCCore", package: "grpc-swift-2"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "MetricsTestKit", package: "swift-metrics"),
        .product(name: "Tracing", package: "swift-distributed-tracing"),
        .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      swiftSettings: swiftSettings
    ),
    .testTarget(
      name: "GRPCCallsCodeGenTests",
      dependencies: [
        .target(name: "GRPCCallsCodeGen"),
        .product(name: "SwiftProtobufPluginLibrary", package: "swift-protobuf"),
        .product(name: "SwiftProtobuf", package: "swift-protobuf"),
      ],
      exclude: ["Golden"],
      swiftSettings: swiftSettings
    ),
  ]
)
