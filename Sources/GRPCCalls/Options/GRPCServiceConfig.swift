internal import Foundation
public import GRPCCore

/// Reads a service config in gRPC's JSON form (the format gRPC core, grpc-go and grpc-java
/// take in `grpc.service_config` and from DNS): per-method timeouts, `waitForReady`, message
/// size limits, retry and hedging policies, the load-balancing policy and retry throttling.
///
/// ```swift
/// options.serviceConfig = try GRPCServiceConfig.parse("""
///   {"methodConfig": [{"name": [{"service": "echo.Echo"}], "timeout": "2s"}],
///    "loadBalancingConfig": [{"round_robin": {}}]}
///   """)
/// ```
///
/// The value is grpc-swift-2's `ServiceConfig`; build one in code to the same effect.
public enum GRPCServiceConfig {
  /// The service config `json` describes.
  ///
  /// - Throws: ``GRPCError`` with code `INVALID_ARGUMENT` naming the field that is malformed
  ///   (`methodConfig[0].timeout: …`) or saying the text is not JSON.
  public static func parse(_ json: String) throws(GRPCError) -> ServiceConfig {
    let data = Data(json.utf8)
    let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    if let object, let problem = Self.rangeProblem(in: object) {
      // Checked first: the core's decoder traps on a duration out of range.
      throw Self.invalid(problem)
    }
    do {
      var config = try JSONDecoder().decode(ServiceConfig.self, from: data)
      if let policy = object?["loadBalancingPolicy"], config.loadBalancingConfig.isEmpty {
        // The field gRPC's loadBalancingConfig replaced, still common in examples.
        guard let name = policy as? String,
          let named = GRPCLoadBalancingPolicy(rawValue: name.lowercased())
        else {
          throw Self.invalid(
            "loadBalancingPolicy: \(policy) is not a policy: use \"round_robin\" or \"pick_first\""
          )
        }
        config.loadBalancingConfig = [named.config]
      }
      return config
    } catch let error as GRPCError {
      throw error
    } catch let error as DecodingError {
      throw Self.invalid(Self.describe(error))
    } catch {
      // A value the core's own checks refuse (a backoff of zero, a bad duration): find where.
      throw Self.invalid(Self.locate(error, in: data))
    }
  }

  private static func invalid(_ detail: String) -> GRPCError {
    GRPCError(
      code: .invalidArgument,
      message: "The service config is not valid: \(detail). It takes gRPC's JSON form "
        + "(https://github.com/grpc/grpc/blob/master/doc/service_config.md)."
    )
  }

  /// What `error` says, after the path of the field it is about.
  private static func describe(_ error: DecodingError) -> String {
    let (path, detail): ([any CodingKey], String) =
      switch error {
      case .typeMismatch(let type, let context): (context.codingPath, "expected \(type)")
      case .valueNotFound(let type, let context): (context.codingPath, "expected \(type)")
      case .keyNotFound(let key, let context):
        (context.codingPath + [key], "required, missing")
      case .dataCorrupted(let context):
        (
          context.codingPath,
          context.codingPath.isEmpty ? "not JSON" : context.debugDescription
        )
      @unknown default: ([], String(describing: error))
      }
    return path.isEmpty ? detail : "\(Self.path(path)): \(detail)"
  }

  /// The first duration or size in `object` that the core would trap on or that makes no sense,
  /// said as `methodConfig[0].timeout: …`.
  private static func rangeProblem(in object: [String: Any]) -> String? {
    guard let configs = object["methodConfig"] as? [Any] else { return nil }
    for (index, config) in configs.enumerated() {
      guard let config = config as? [String: Any] else { continue }
      let at = "methodConfig[\(index)]"
      var durations: [(String, Any?)] = [("timeout", config["timeout"])]
      if let retry = config["retryPolicy"] as? [String: Any] {
        durations += ["initialBackoff", "maxBackoff"].map { ("retryPolicy.\($0)", retry[$0]) }
      }
      if let hedging = config["hedgingPolicy"] as? [String: Any] {
        durations.append(("hedgingPolicy.hedgingDelay", hedging["hedgingDelay"]))
      }
      for case (let field, let value as String) in durations where !Self.isDuration(value) {
        return "\(at).\(field): \"\(value)\" is not a duration: give seconds, with up to nine "
          + "decimals, and an s (\"1.5s\"), at most \(Self.longestDuration)s"
      }
      for field in ["maxRequestMessageBytes", "maxResponseMessageBytes"] {
        if let bytes = config[field] as? Double, bytes < 0 {
          return "\(at).\(field): \(bytes) is negative"
        }
      }
    }
    return nil
  }

  /// The longest duration in gRPC's JSON form (10,000 years), in seconds.
  private static let longestDuration = 315_576_000_000

  /// Whether `text` is a duration in gRPC's JSON form, within range: `1s`, `0.25s`.
  private static func isDuration(_ text: String) -> Bool {
    guard text.hasSuffix("s") else { return false }
    let parts = text.dropLast().split(separator: ".", omittingEmptySubsequences: false)
    guard (1 ... 2).contains(parts.count), let whole = parts.first, !whole.isEmpty,
      whole.count <= 12, whole.allSatisfy(Self.isDigit), let seconds = Int(whole),
      seconds <= Self.longestDuration
    else { return false }
    guard parts.count == 2 else { return true }
    return (1 ... 9).contains(parts[1].count) && parts[1].allSatisfy(Self.isDigit)
  }

  private static func isDigit(_ character: Character) -> Bool {
    ("0" ... "9").contains(character)
  }

  /// `methodConfig[0].retryPolicy`.
  private static func path(_ keys: [any CodingKey]) -> String {
    keys.reduce(into: "") { path, key in
      if let index = key.intValue {
        path += "[\(index)]"
      } else {
        path += path.isEmpty ? key.stringValue : ".\(key.stringValue)"
      }
    }
  }

  /// The field of `data` whose value `error` refused, found by decoding one part at a time: the
  /// core's checks throw errors that carry no path.
  private static func locate(_ error: any Error, in data: Data) -> String {
    let reason = (error as? RuntimeError)?.message ?? String(describing: error)
    guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
      return reason
    }
    func fails<Value: Decodable>(_ type: Value.Type, _ json: Any) -> Bool {
      guard let part = try? JSONSerialization.data(withJSONObject: json) else { return false }
      return (try? JSONDecoder().decode(type, from: part)) == nil
    }
    if let configs = object["methodConfig"] as? [[String: Any]] {
      for (index, config) in configs.enumerated() where fails(MethodConfig.self, config) {
        // The names alone, then each field beside them.
        let names = config["name"] ?? []
        if fails(MethodConfig.self, ["name": names]) {
          return "methodConfig[\(index)].name: \(reason)"
        }
        for field in config.keys.sorted() where field != "name" {
          if fails(MethodConfig.self, ["name": names, field: config[field]!]) {
            return "methodConfig[\(index)].\(field): \(reason)"
          }
        }
        return "methodConfig[\(index)]: \(reason)"
      }
    }
    for field in ["retryThrottling", "loadBalancingConfig"] {
      if let value = object[field], fails(ServiceConfig.self, [field: value]) {
        return "\(field): \(reason)"
      }
    }
    return reason
  }
}
