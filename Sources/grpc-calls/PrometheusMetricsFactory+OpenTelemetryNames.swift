internal import Prometheus

extension PrometheusMetricsFactory {
  /// A factory that writes OpenTelemetry's dotted names (`rpc.client.duration`) the way
  /// OpenTelemetry's Prometheus exporter does (`rpc_client_duration`): Prometheus names and
  /// label names allow no dots.
  static func openTelemetryNames(registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory
  {
    var factory = PrometheusMetricsFactory(registry: registry)
    factory.nameAndLabelSanitizer = { name, labels in
      (Self.underscored(name), labels.map { (Self.underscored($0.0), $0.1) })
    }
    return factory
  }

  private static func underscored(_ name: String) -> String {
    String(name.map { $0 == "." ? "_" : $0 })
  }
}
