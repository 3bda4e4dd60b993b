public import Hummingbird
public import Logging
public import NIOCore
import Foundation

/// The request context: Hummingbird's core storage plus the authenticated session, once a middleware has set it.
public struct TouchstoneRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The caller's session; set by the session authenticator on protected routes.
    public var identity: AuthenticatedSession?
    /// Largest request body accepted; larger bodies get 413 `payload_too_large`.
    public var maxUploadSize: Int

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.maxUploadSize = 64 * 1024
    }

    /// The authenticated session, or 401 `unauthenticated`.
    func requireIdentity() throws -> AuthenticatedSession {
        guard let identity else { throw APIError.unauthenticated() }
        return identity
    }
}
