import Hummingbird

/// What iOS and Android fetch to trust the domain for the apps' passkeys: `GET /.well-known/apple-app-site-association`
/// (`webcredentials`) and `GET /.well-known/assetlinks.json` (`delegate_permission/common.get_login_creds`); and what a
/// browser fetches for a passkey ceremony on a related site: `GET /.well-known/webauthn` (`{"origins": [...]}`,
/// WebAuthn Level 3 §5.11, Related Origin Requests). From configuration, served directly (no redirect), as JSON.
struct AppAssociationController {
    typealias Context = TouchstoneRequestContext

    let settings: PasskeySettings

    func addRoutes(to router: Router<Context>) {
        router.get("/.well-known/apple-app-site-association", use: self.appleAppSiteAssociation)
        router.get("/.well-known/assetlinks.json", use: self.assetLinks)
        router.get("/.well-known/webauthn", use: self.relatedOrigins)
    }

    struct RelatedOrigins: Encodable { var origins: [String] }

    /// 404 when no related origin is configured: a browser then treats the RP ID as serving its own origins only.
    @Sendable func relatedOrigins(request: Request, context: Context) async throws -> JSONResponse<RelatedOrigins> {
        guard !self.settings.relatedOrigins.isEmpty else { throw APIError.notFound }
        return JSONResponse(.ok, RelatedOrigins(origins: self.settings.relatedOrigins), headers: [.cacheControl: "public, max-age=3600"])
    }

    struct AppleAppSiteAssociation: Encodable {
        struct WebCredentials: Encodable {
            var apps: [String]
        }

        var webcredentials: WebCredentials
    }

    @Sendable func appleAppSiteAssociation(request: Request, context: Context) async throws -> JSONResponse<AppleAppSiteAssociation> {
        JSONResponse(.ok, AppleAppSiteAssociation(webcredentials: .init(apps: self.settings.appleAppIds)), headers: [.cacheControl: "public, max-age=3600"])
    }

    struct Statement: Encodable {
        struct Target: Encodable {
            var namespace = "android_app"
            var package_name: String
            var sha256_cert_fingerprints: [String]
        }

        var relation = ["delegate_permission/common.get_login_creds", "delegate_permission/common.handle_all_urls"]
        var target: Target
    }

    /// One statement per package, with all its fingerprints.
    @Sendable func assetLinks(request: Request, context: Context) async throws -> JSONResponse<[Statement]> {
        var packages: [String] = []
        var fingerprints: [String: [String]] = [:]
        for app in self.settings.androidApps {
            if fingerprints[app.packageName] == nil { packages.append(app.packageName) }
            fingerprints[app.packageName, default: []].append(app.fingerprint)
        }
        let statements = packages.map { Statement(target: .init(package_name: $0, sha256_cert_fingerprints: fingerprints[$0] ?? [])) }
        return JSONResponse(.ok, statements, headers: [.cacheControl: "public, max-age=3600"])
    }
}
