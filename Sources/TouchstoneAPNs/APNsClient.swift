public import AsyncHTTPClient
public import Foundation
import NIOCore
import NIOHTTP1
public import NIOSSL

/// Sends notifications to Apple's push service over HTTP/2 (`POST /3/device/<token>`), authenticated with a provider
/// token (``APNsProviderToken``).
///
/// ```swift
/// let client = APNsClient(baseURL: "https://api.push.apple.com", topic: "com.example.bank", token: try await APNsProviderToken(...))
/// let answer = try await client.send(APNsNotification(title: "Sign-in request", body: "..."), to: deviceToken)
/// if answer.tokenIsInvalid { forget(deviceToken) }
/// ```
public final class APNsClient: Sendable {
    /// Apple's answer to one notification.
    public struct Response: Sendable, Hashable {
        public var status: Int
        /// Apple's `reason` on a refusal (`BadDeviceToken`, `Unregistered`, `ExpiredProviderToken`...).
        public var reason: String?
        /// `apns-id`.
        public var id: String?

        public var delivered: Bool { self.status == 200 }
        /// The device token is no good any more: stop sending to it.
        public var tokenIsInvalid: Bool {
            self.status == 410 || (self.status == 400 && (self.reason == "BadDeviceToken" || self.reason == "DeviceTokenNotForTopic"))
        }
    }

    private let baseURL: String
    private let topic: String
    private let token: APNsProviderToken
    private let http: HTTPClient

    /// - Parameters:
    ///   - baseURL: `https://api.push.apple.com` (or `https://api.sandbox.push.apple.com`, or a stand-in in tests).
    ///   - topic: The app's bundle id.
    ///   - trustRoots: Certificates to trust instead of the system's (a stand-in's test CA); nil: the system's.
    ///   - connectTimeout: How long a connection may take (the client retries a refused one until then).
    public init(
        baseURL: String,
        topic: String,
        token: APNsProviderToken,
        trustRoots: [NIOSSLCertificate]? = nil,
        connectTimeout: Duration = .seconds(10)
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.topic = topic
        self.token = token
        var tls = TLSConfiguration.makeClientConfiguration()
        if let trustRoots { tls.trustRoots = .certificates(trustRoots) }
        // Apple's service speaks HTTP/2 only: ALPN offers h2 (and the client keeps one connection per host).
        tls.applicationProtocols = ["h2"]
        var configuration = HTTPClient.Configuration(
            tlsConfiguration: tls,
            redirectConfiguration: .disallow,
            timeout: .init(connect: .milliseconds(Int64(connectTimeout / .milliseconds(1))), read: .seconds(20))
        )
        configuration.httpVersion = .automatic
        self.http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Sends `notification` to the device token (hex); throws only when no answer came.
    public func send(_ notification: APNsNotification, to deviceToken: String) async throws -> Response {
        var response = try await self.attempt(notification, to: deviceToken)
        if response.status == 403 && response.reason == "ExpiredProviderToken" {
            await self.token.invalidate()
            response = try await self.attempt(notification, to: deviceToken)
        }
        return response
    }

    private func attempt(_ notification: APNsNotification, to deviceToken: String) async throws -> Response {
        var request = HTTPClientRequest(url: "\(self.baseURL)/3/device/\(deviceToken)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(try await self.token.token())")
        request.headers.add(name: "apns-topic", value: self.topic)
        request.headers.add(name: "apns-push-type", value: "alert")
        request.headers.add(name: "apns-priority", value: "10")
        request.headers.add(name: "apns-expiration", value: String(Int64((notification.expiresAt?.timeIntervalSince1970 ?? 0).rounded(.down))))
        if let collapseId = notification.collapseId { request.headers.add(name: "apns-collapse-id", value: String(collapseId.utf8.prefix(64))!) }
        request.headers.add(name: "content-type", value: "application/json")
        request.body = .bytes(ByteBuffer(bytes: notification.payload()))
        let answer: HTTPClientResponse
        do {
            answer = try await self.http.execute(request, timeout: .seconds(20))
        } catch {
            throw APNsError.transport("\(error)")
        }
        let body = try await answer.body.collect(upTo: 16 * 1024)
        struct Refusal: Decodable { var reason: String? }
        let reason = answer.status == .ok ? nil : (try? JSONDecoder().decode(Refusal.self, from: Data(body.readableBytesView)))?.reason
        return Response(status: Int(answer.status.code), reason: reason, id: answer.headers.first(name: "apns-id"))
    }

    /// Closes the connection.
    public func shutdown() async {
        try? await self.http.shutdown()
    }
}
