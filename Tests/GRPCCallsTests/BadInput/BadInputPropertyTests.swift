import Foundation
import GRPCCalls
import GRPCCallsInterop
import GRPCCallsTestSupport
import GRPCCore
import PropertyBased
import Testing

/// Random hosts, channel arguments and durations: each gives a `GRPCError` or a working call,
/// never a trap (a trap ends the whole test process) and never a hang.
@Suite("Bad input, generated")
struct BadInputPropertyTests {
  /// Pieces hosts are made of: schemes, addresses, separators and the characters that break
  /// parsers.
  static let hostPieces = [
    "dns:", "dns:///", "ipv4:", "ipv6:", "unix:", "unix-abstract:", "http://", "https://", "//",
    "[", "]", ":", "::1", "[::1]", "127.0.0.1", "0.0.0.0", "localhost", "example.com", "a", ".",
    "0", "443", "65535", "65536", "-1", "99999999999999999999", "%", "%25", "@", "/", "?", "#",
    " ", "\t", "\n", "\u{0}", "é", "ß", "😀", ",",
  ]

  /// Checks that a host is taken or refused with INVALID_ARGUMENT and a message, at both places
  /// it is parsed: the request options and the channel key.
  static func checkHost(_ host: String) {
    do {
      _ = try GRPCRequestOptions(host: host, path: "/grpc.testing.TestService/EmptyCall")
    } catch let error as GRPCError {
      #expect(
        error.code == .invalidArgument && !error.message.isEmpty,
        "\(host.debugDescription): \(error)"
      )
    } catch {
      Issue.record("\(host.debugDescription): not a GRPCError: \(error)")
    }
    do {
      _ = try ChannelKey(host: host, options: GRPCCallOptions())
    } catch {
      #expect(
        error.code == .invalidArgument && !error.message.isEmpty,
        "\(host.debugDescription): \(error)"
      )
    }
  }

  @Test("hosts assembled from scheme, address and separator pieces: a key or INVALID_ARGUMENT")
  func assembledHosts() async {
    let hosts = Gen.element(of: Self.hostPieces).map { $0 ?? "" }.array(of: 0 ... 6).map {
      $0.joined()
    }
    await propertyCheck(count: 2_000, input: hosts) { Self.checkHost($0) }
  }

  @Test("hosts of random characters: a key or INVALID_ARGUMENT")
  func noiseHosts() async {
    let noise = Gen.character(in: "\u{0}" ... "\u{2FF}").string(of: 0 ... 24)
    await propertyCheck(count: 2_000, input: noise) { Self.checkHost($0) }
  }

  /// Channel arguments: the known names (and a few unknown ones) with extreme values of either
  /// kind.
  static let argNames = [
    "grpc.max_receive_message_length", "grpc.keepalive_time_ms", "grpc.keepalive_timeout_ms",
    "grpc.min_reconnect_backoff_ms", "grpc.initial_reconnect_backoff_ms",
    "grpc.max_reconnect_backoff_ms", "grpc.primary_user_agent", "grpc.secondary_user_agent",
    "grpc.default_authority", "grpc.ssl_target_name_override", "grpc.enable_retries",
    "grpc.http2.max_frame_size", "grpc.compression_enabled_algorithms_bitset",
    "grpc.unknown", "", "x",
  ]
  static let argIntegers = [
    Int.min, -1, 0, 1, 2, 100, 16_383, 16_384, 16_777_215, 16_777_216, 1 << 31, Int.max,
  ]
  static let argStrings = ["", "0", "-1", "abc", "bad name", "é", "\u{0}", "127.0.0.1:1", "[::1]"]

  @Test(
    "channel arguments with extreme values: each call to the test server closes once, and refusals are INVALID_ARGUMENT"
  )
  func extremeChannelArgs() async throws {
    try await withTestServer { server in
      let names = Gen.element(of: Self.argNames).map { $0 ?? "" }
      let integers = Gen.element(of: Self.argIntegers).map { GRPCChannelArgValue.integer($0 ?? 0) }
      let strings = Gen.element(of: Self.argStrings).map { GRPCChannelArgValue.string($0 ?? "") }
      let values = Gen<GRPCChannelArgValue>.oneOf(integers, strings)
      let channelArgs = zip(names, values).array(of: 0 ... 4).map { pairs in
        Dictionary(pairs, uniquingKeysWith: { first, _ in first })
      }
      await propertyCheck(count: 150, input: channelArgs) { args in
        var options = server.options
        options.timeout = 10
        options.additionalChannelArgs = args
        let recorder = try? await server.complete(
          "EmptyCall",
          Grpc_Testing_Empty(),
          options: options
        ).recorder
        #expect(recorder != nil, "\(args): the call did not close")
        guard let recorder else { return }
        #expect(recorder.closeCount == 1 && recorder.deliveryContractHeld, "\(args)")
        if let error = recorder.close?.error {
          #expect(!error.message.isEmpty, "\(args): \(error)")
        }
      }
      server.pool.disconnectAll()
    }
  }

  static let durationValues: [Double] = [
    // 60 s rather than a few: a call must succeed with any duration of a minute or more, and a
    // busy machine may take seconds to connect and answer.
    -.infinity, -1, -0.0, 0, 1e-12, 1e-3, 60, 1e9, 1e12, 1e300, .greatestFiniteMagnitude, .infinity,
    .nan,
  ]

  @Test("durations from NaN to infinity in every option: calls close once; long ones mean never")
  func extremeDurations() async throws {
    try await withTestServer { server in
      let durations = Gen.element(of: Self.durationValues).map { $0 ?? 0 }
      await propertyCheck(count: 150, input: durations, durations, durations, durations) {
        timeout,
        keepalive,
        connect,
        backoff in
        var options = server.options
        options.timeout = timeout
        options.keepaliveInterval = keepalive
        options.keepaliveTimeout = keepalive
        options.connectMinTimeout = connect
        options.connectInitialBackoff = backoff
        options.connectMaxBackoff = backoff
        options.retryFactor = backoff
        let recorder = try? await server.complete(
          "EmptyCall",
          Grpc_Testing_Empty(),
          options: options
        ).recorder
        let described =
          "timeout \(timeout), keepalive \(keepalive), connect \(connect), backoff \(backoff)"
        // The property library reports a failed check by its input only, not by its message:
        // print a failed or missing close so that a failure in CI's log says what went wrong.
        if recorder?.close?.error != nil || recorder == nil {
          print(
            "extremeDurations: \(described): \(recorder.map { String(describing: $0.close?.error) } ?? "no close")"
          )
        }
        #expect(recorder != nil, "\(described): the call did not close")
        guard let close = recorder?.close else { return }
        #expect(recorder?.closeCount == 1, "\(described)")
        // Durations too short to connect, ping or answer in (under a minute, on a busy
        // machine) may fail the call, with a message; none, or long ones, must not.
        let workable = [timeout, keepalive, connect].allSatisfy { !($0 > 0) || $0 >= 60 }
        if workable {
          #expect(close.error == nil, "\(described): \(String(describing: close.error))")
        } else if let error = close.error {
          #expect(!error.message.isEmpty, "\(described): \(error)")
        }
      }
      server.pool.disconnectAll()
    }
  }
}
