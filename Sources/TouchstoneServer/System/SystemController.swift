import Foundation
import Hummingbird
import Logging
import TouchstoneCrypto
import TouchstoneStore

/// `GET /health`, `GET /health/live`, `GET /health/ready`, `GET /v1/config`, `GET /openapi.json`.
struct SystemController {
    typealias Context = TouchstoneRequestContext

    let configuration: TouchstoneConfiguration
    let store: any TouchstoneStore
    let policy: PolicyProvider

    func addRoutes(to router: Router<Context>) {
        router.get("/health", use: self.health)
        router.get("/health/live", use: self.health)
        router.get("/health/ready", use: self.ready)
        router.get("/v1/config", use: self.config)
        router.get("/openapi.json", use: self.openAPI)
    }

    struct Health: Encodable { var status = "ok" }

    @Sendable func health(request: Request, context: Context) async throws -> JSONResponse<Health> {
        JSONResponse(.ok, Health())
    }

    /// 200 when the database answers, 503 `storage_unavailable` when it does not: what a load balancer routes by.
    @Sendable func ready(request: Request, context: Context) async throws -> JSONResponse<Health> {
        do {
            try await self.store.checkHealth()
        } catch {
            context.logger.warning("readiness check failed: \(error)")
            throw APIError.storageUnavailable
        }
        return JSONResponse(.ok, Health())
    }

    struct Config: Encodable {
        struct Biometrics: Encodable {
            var enabled: Bool
            var devicePolicy: String
            var algorithms: [String]
            var challengeTTLSeconds: Int
        }
        struct SignUp: Encodable {
            var enabled: Bool
        }
        var biometrics: Biometrics
        /// Whether people may create accounts (`TOUCHSTONE_SIGN_UP`).
        var signUp: SignUp
    }

    @Sendable func config(request: Request, context: Context) async throws -> JSONResponse<Config> {
        JSONResponse(
            .ok,
            Config(
                biometrics: .init(
                    enabled: self.policy.current.biometricsEnabled,
                    devicePolicy: self.policy.current.devicePolicy.rawValue,
                    algorithms: self.policy.current.algorithms.map(\.rawValue),
                    challengeTTLSeconds: Int(self.configuration.challengeTTL.components.seconds)
                ),
                signUp: .init(enabled: self.configuration.accounts.signUp)
            )
        )
    }

    @Sendable func openAPI(request: Request, context: Context) async throws -> Response {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
            let data = try? Data(contentsOf: url)
        else {
            throw APIError.notFound
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(bytes: data))
        )
    }
}
