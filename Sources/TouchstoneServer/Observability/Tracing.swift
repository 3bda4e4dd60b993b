import Foundation
import HTTPTypes
import Hummingbird
public import Logging
import OTel
public import ServiceLifecycle
import Tracing

/// Distributed tracing: off unless `TOUCHSTONE_OTLP_ENDPOINT` names an OTLP/HTTP collector.
public struct TracingSettings: Sendable, Hashable {
    /// The collector's base URL (`http://otel-collector:4318`) or its traces URL (`.../v1/traces`); nil turns tracing off.
    public var otlpEndpoint: String?
    /// `http/protobuf` (every collector) or `http/json`.
    public var protocolName = "http/protobuf"
    /// The `service.name` resource attribute.
    public var serviceName = "touchstone"
    /// The fraction of new traces recorded (a request carrying a sampled `traceparent` is always recorded).
    public var sampleRatio = 1.0

    public init() {}

    public var enabled: Bool { self.otlpEndpoint != nil }

    /// The traces URL: the endpoint as given when it already ends with `/v1/traces`, else with it appended.
    var tracesURL: String? {
        guard var endpoint = self.otlpEndpoint else { return nil }
        if endpoint.hasSuffix("/v1/traces") { return endpoint }
        while endpoint.hasSuffix("/") { endpoint.removeLast() }
        return endpoint + "/v1/traces"
    }
}

public enum TouchstoneTracing {
    /// Makes the OTLP exporter and installs its tracer as the process's (swift-distributed-tracing's
    /// `InstrumentationSystem`, once per process: `touchstone serve` calls this). Returns the exporter's background
    /// service, to run with the server (``TouchstoneDependencies/services``), or nil when tracing is off. The standard
    /// `OTEL_*` environment variables (`OTEL_BSP_SCHEDULE_DELAY`, `OTEL_EXPORTER_OTLP_HEADERS`...) apply too.
    public static func bootstrap(_ settings: TracingSettings, logger: Logger) throws -> (any Service)? {
        guard let url = settings.tracesURL else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = settings.serviceName
        configuration.diagnosticLogger = .custom(logger)
        configuration.propagators = [.traceContext]
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.traces.enabled = true
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.endpoint = url
        configuration.traces.otlpExporter.protocol = settings.protocolName == "http/json" ? .httpJSON : .httpProtobuf
        configuration.traces.sampler = .parentBasedTraceIDRatio(ratio: settings.sampleRatio) ?? .parentBasedAlwaysOn
        let backend = try OTel.makeTracingBackend(configuration: configuration)
        InstrumentationSystem.bootstrap(backend.factory)
        return backend.service
    }
}

/// A server span per request, continuing the caller's W3C `traceparent`. Its attributes are the method, the route
/// template, the status and the request id: never the path's values, the query, a header or the client's address.
struct TracingMiddleware: RouterMiddleware {
    typealias Context = TouchstoneRequestContext

    struct Extractor: Instrumentation.Extractor {
        func extract(key: String, from carrier: HTTPFields) -> String? {
            HTTPField.Name(key).flatMap { carrier[$0] }
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var serviceContext = ServiceContext.current ?? .topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &serviceContext, using: Extractor())
        let method = request.method.rawValue
        let route = context.endpointPath ?? "unmatched"
        return try await withSpan("\(method) \(route)", context: serviceContext, ofKind: .server) { span in
            span.attributes["http.request.method"] = method
            span.attributes["http.route"] = route
            let response = try await next(request, context)
            span.attributes["http.response.status_code"] = Int(response.status.code)
            if let id = response.headers[.requestId] { span.attributes["touchstone.request_id"] = id }
            if response.status.code >= 500 { span.setStatus(SpanStatus(code: .error)) }
            return response
        }
    }
}
