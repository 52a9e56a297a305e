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
    do {
      return try JSONDecoder().decode(ServiceConfig.self, from: data)
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
        // Each field alone, beside the names it needs.
        let names = config["name"] ?? []
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
