import Foundation
import HTTPTypes
import Hummingbird

/// The caller's address and user agent, for rate limits and the audit trail.
public struct ClientInfo: Sendable, Hashable {
    /// The client's IP address: the TCP peer, or the address a trusted proxy forwarded.
    public var address: String?
    public var userAgent: String?

    public init(address: String?, userAgent: String?) {
        self.address = address
        self.userAgent = userAgent
    }

    /// The client of the request being handled (set for the request's task by ``ClientInfoMiddleware``).
    @TaskLocal public static var current = ClientInfo(address: nil, userAgent: nil)

    /// The client address: the peer, unless the peer is a trusted proxy; then the right-most address of
    /// `X-Forwarded-For` that is not itself a trusted proxy. A forwarded value from an untrusted peer is ignored, so
    /// a client cannot choose its own address.
    public static func resolveAddress(peer: String?, forwardedFor: [String], trustedProxies: Set<String>) -> String? {
        guard let peer, trustedProxies.contains(peer) else { return peer }
        let hops = forwardedFor.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var client = peer
        for hop in hops.reversed() {
            guard !hop.isEmpty, hop.utf8.count <= 64 else { break }
            client = hop
            if !trustedProxies.contains(hop) { break }
        }
        return client
    }
}

/// Works out the ``ClientInfo`` of each request and makes it available to everything the request does.
struct ClientInfoMiddleware: RouterMiddleware {
    typealias Context = TouchstoneRequestContext
    let trustedProxies: Set<String>

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws
        -> Response
    {
        var context = context
        let forwarded = request.headers[values: HTTPField.Name("X-Forwarded-For")!]
        let address = ClientInfo.resolveAddress(
            peer: context.peerAddress,
            forwardedFor: forwarded,
            trustedProxies: self.trustedProxies
        )
        let userAgent = request.headers[.userAgent].map { String($0.prefix(256)) }
        context.client = ClientInfo(address: address, userAgent: userAgent)
        return try await ClientInfo.$current.withValue(context.client) {
            try await next(request, context)
        }
    }
}

