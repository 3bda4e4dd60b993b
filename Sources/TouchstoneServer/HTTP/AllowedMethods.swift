import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// The methods each route template answers, so that a known path asked with another method answers 405 with an
/// `Allow` header (RFC 9110 §15.5.6) instead of the router's 404.
///
/// Filled once from ``Router/routes`` after every route is added; read only on the way to a 404, never on a hit.
final class AllowedMethods: Sendable {
    /// One route template: its segments (a literal, or nil for a `:parameter`) and its methods.
    private struct Template: Sendable {
        var segments: [Substring?]
        var methods: Set<HTTPRequest.Method>
    }

    private let templates = NIOLockedValueBox<[Template]>([])

    /// Reads the router's routes (after they are all added).
    func load<Context>(from router: Router<Context>) {
        var byPath: [String: Template] = [:]
        for route in router.routes {
            let path = route.path.description
            let segments = path.split(separator: "/").map { $0.hasPrefix(":") || $0.hasPrefix("{") ? nil : $0 }
            byPath[path, default: Template(segments: segments, methods: [])].methods.insert(route.method)
            // The router answers HEAD wherever it answers GET (autoGenerateHeadEndpoints), without listing it.
            if route.method == .get { byPath[path]?.methods.insert(.head) }
        }
        self.templates.withLockedValue { $0 = Array(byPath.values) }
    }

    /// The methods the path answers, sorted; empty when no route has the path. As in the router, a literal segment
    /// wins over a parameter: `/v1/biometrics/registrations/finish` is that route's, not `.../registrations/:id`'s.
    func methods(for path: String) -> [HTTPRequest.Method] {
        let segments = path.split(separator: "/")
        var best: (literals: [Bool], methods: Set<HTTPRequest.Method>)?
        for template in self.templates.withLockedValue({ $0 }) where template.segments.count == segments.count {
            guard zip(template.segments, segments).allSatisfy({ $0 == nil || $0 == $1 }) else { continue }
            let literals = template.segments.map { $0 != nil }
            if let current = best, current.literals == literals {
                best?.methods.formUnion(template.methods)
            } else if best == nil || literals.lexicographicallyPrecedes(best!.literals, by: { $0 && !$1 }) {
                best = (literals, template.methods)
            }
        }
        return (best?.methods ?? []).sorted { $0.rawValue < $1.rawValue }
    }
}
