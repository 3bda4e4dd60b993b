import Hummingbird
import Logging
import ServiceLifecycle

/// Access tokens (RFC 9068), the JWKS, introspection, and the signing keys' rotation in the background.
struct TokensFeature: Feature {
    let core: ServerCore

    func addRoutes(to router: Router<TouchstoneRequestContext>) {
        let configuration = self.core.configuration
        TokenController(
            tokens: TokenService(
                ring: self.core.ring,
                store: self.core.store,
                secrets: self.core.secrets,
                now: self.core.now,
                issuer: configuration.tokens.resolvedIssuer(port: configuration.port),
                audiences: configuration.tokens.resolvedAudiences(port: configuration.port),
                clientId: configuration.tokens.clientId,
                lifetime: configuration.tokens.accessTokenLifetime.timeInterval,
                metrics: self.core.audit.metrics
            ),
            ring: self.core.ring,
            store: self.core.store,
            jwksMaxAge: Int(configuration.tokens.jwksMaxAge.components.seconds),
            dpop: self.core.dpop
        ).addRoutes(to: router, authenticator: self.core.authenticator)
    }

    var services: [any Service] {
        let (ring, logger) = (self.core.ring, self.core.logger)
        return [
            PeriodicService(interval: .seconds(60)) {
                do {
                    try await ring.maintain()
                } catch {
                    logger.warning("signing key rotation check failed: \(error)")
                }
            }
        ]
    }
}
