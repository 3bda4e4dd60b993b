public import Hummingbird
public import Logging
public import NIOCore
import TouchstoneStore
import Foundation

/// The request context: Hummingbird's core storage plus the authenticated session, once a middleware has set it.
public struct TouchstoneRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The caller's session; set by the session authenticator on protected routes.
    public var identity: AuthenticatedSession?
    /// Largest request body accepted; larger bodies get 413 `payload_too_large`.
    public var maxUploadSize: Int
    /// The TCP peer (nil for in-process test clients).
    public let remoteAddress: SocketAddress?
    /// The TCP peer's IP address as text, formatted once per request (the middlewares read it).
    public let peerAddress: String?
    /// Who is calling, as far as the server can tell: set by the client-info middleware.
    public var client: ClientInfo
    /// The admin key of the caller, on admin routes.
    var adminKey: AdminKeyRecord?

    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.identity = nil
        self.maxUploadSize = 64 * 1024
        let remoteAddress = source.channel.remoteAddress
        self.remoteAddress = remoteAddress
        self.peerAddress = remoteAddress?.ipAddress
        self.client = ClientInfo(address: self.peerAddress, userAgent: nil)
        self.adminKey = nil
    }

    /// The authenticated session, or 401 `unauthenticated`.
    func requireIdentity() throws -> AuthenticatedSession {
        guard let identity else { throw APIError.unauthenticated() }
        return identity
    }
}
