internal import Foundation
internal import GRPCCore

/// The channel-level options of ``GRPCCallOptions``, as one value: the channel key is derived
/// from them and the host (settings that differ may still give one key, e.g. a channel
/// argument and the option it sets).
///
/// The public properties of ``GRPCCallOptions`` read and write these fields, clamping where
/// they document it; a new channel-level option is a field here, and so part of every
/// comparison without further bookkeeping.
struct ChannelSettings: Hashable, Sendable {
  var responseSizeLimit: Int = 0
  var transportType: GRPCTransportType = .tls
  var transport: GRPCTransportID?
  var logContext: [String: String] = [:]
  var userAgentPrefix: String?
  var userAgentSuffix: String?
  var channelPoolDomain: String?
  var channelId: Int = 0
  var flushCoalescing: Bool = GRPCCallOptions.defaultFlushCoalescing
  var http2TargetWindowSize: Int = 0
  var pemRootCertificates: String?
  var pemPrivateKey: String?
  var pemCertificateChain: String?
  var hostNameOverride: String?
  var serverAuthority: String?
  var compressionAlgorithm: GRPCCompressionAlgorithm = .none
  var keepaliveInterval: TimeInterval = 0
  var keepaliveTimeout: TimeInterval = 0
  var keepalivePermitWithoutCalls: Bool = false
  var connectMinTimeout: TimeInterval = 0
  var connectInitialBackoff: TimeInterval = 0
  var connectMaxBackoff: TimeInterval = 0
  var minRetryInterval: TimeInterval = 0
  var maxRetryInterval: TimeInterval = 0
  var retryFactor: Double = 0
  var enableRetry: Bool = true
  var additionalChannelArgs: GRPCCallOptions.ChannelArgs = [:]
  var serviceConfig: ServiceConfig?
  var loadBalancingPolicy: GRPCLoadBalancingPolicy?
  var nameResolutionInterval: TimeInterval = GRPCCallOptions.defaultNameResolutionInterval
  var connectionsPerTarget = 1
}

extension ChannelSettings {
  /// Settings stored once for the copies of one set of options (copy on write).
  ///
  /// `GRPCCallOptions` writes `value` only while it holds the only reference, so a box that
  /// is shared is never written: that is what makes it safe to send.
  final class Shared: @unchecked Sendable {
    var value: ChannelSettings

    init(_ value: ChannelSettings) {
      self.value = value
    }

    /// Whether both hold equal settings; the same box needs no comparison.
    func holdsSameSettings(as other: Shared) -> Bool {
      self === other || self.value == other.value
    }
  }
}
