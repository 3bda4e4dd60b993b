import Crypto
import Foundation
import JWTKit
import NIOConcurrencyHelpers
import Testing
import TouchstoneAPNs
import TouchstoneTesting

/// The provider token and the HTTP/2 client, against a local stand-in for Apple's service.
struct APNsClientTests {
    static let key = P256.Signing.PrivateKey()

    final class Clock: Sendable {
        let value = NIOLockedValueBox(Date(timeIntervalSince1970: 1_800_000_000))
        var now: @Sendable () -> Date { { self.value.withLockedValue { $0 } } }
        func advance(_ seconds: TimeInterval) { self.value.withLockedValue { $0 += seconds } }
    }

    static func parts(_ token: String) throws -> (header: [String: Any], claims: [String: Any], signed: [UInt8], signature: [UInt8]) {
        let pieces = token.split(separator: ".").map(String.init)
        try #require(pieces.count == 3)
        func decode(_ text: String) throws -> Data {
            var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
            return try #require(Data(base64Encoded: base64))
        }
        let header = try #require(try JSONSerialization.jsonObject(with: decode(pieces[0])) as? [String: Any])
        let claims = try #require(try JSONSerialization.jsonObject(with: decode(pieces[1])) as? [String: Any])
        return (header, claims, Array("\(pieces[0]).\(pieces[1])".utf8), Array(try decode(pieces[2])))
    }

    @Test func theProviderTokenIsAnES256JWTRenewedAfterFortyMinutes() async throws {
        let clock = Clock()
        let provider = try await APNsProviderToken(keyPEM: Self.key.pemRepresentation, keyId: "ABC123DEFG", teamId: "TEAM123456", now: clock.now)
        let first = try await provider.token()
        let (header, claims, signed, signature) = try Self.parts(first)
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "ABC123DEFG")
        #expect(claims["iss"] as? String == "TEAM123456" && claims["iat"] as? Int == 1_800_000_000)
        #expect(Set(claims.keys) == ["iss", "iat"])
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        #expect(Self.key.publicKey.isValidSignature(ecdsa, for: signed))
        clock.advance(39 * 60)
        #expect(try await provider.token() == first)
        clock.advance(60)
        #expect(try await provider.token() != first)
        await provider.invalidate()
        let renewed = try Self.parts(try await provider.token())
        #expect(renewed.claims["iat"] as? Int == 1_800_000_000 + 40 * 60)
    }

    @Test func aKeyThatIsNotP256IsRefused() async throws {
        await #expect(throws: APNsError.invalidKey("")) {
            _ = try await APNsProviderToken(keyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", keyId: "K", teamId: "T")
        }
    }

    @Test func aNotificationGoesOverHTTP2WithApplesHeaders() async throws {
        let server = try await TestAPNsServer.start()
        defer { server.stop() }
        let provider = try await APNsProviderToken(keyPEM: Self.key.pemRepresentation, keyId: "ABC123DEFG", teamId: "TEAM123456")
        let client = APNsClient(baseURL: server.url, topic: "com.example.bank", token: provider, trustRoots: [try server.trustRoot])
        let token = String(repeating: "ab", count: 32)
        let expires = Date(timeIntervalSince1970: 1_900_000_000)
        let answer = try await client.send(
            APNsNotification(title: "Sign-in request", body: "Web bank asks you to sign in", category: "SIGN_IN", data: ["requestId": "r1"],
                expiresAt: expires, collapseId: "r1"),
            to: token)
        #expect(answer.delivered && answer.id != nil)
        let received = try #require(server.received.first)
        #expect(received.http2 && received.deviceToken == token)
        #expect(received.headers["apns-topic"] == "com.example.bank" && received.headers["apns-push-type"] == "alert")
        #expect(received.headers["apns-priority"] == "10" && received.headers["apns-expiration"] == "1900000000")
        #expect(received.headers["apns-collapse-id"] == "r1")
        let bearer = try #require(received.headers["authorization"])
        let bearerHeader = try Self.parts(String(bearer.dropFirst(7))).header
        #expect(bearer.hasPrefix("bearer ") && bearerHeader["kid"] as? String == "ABC123DEFG")
        let aps = try #require(received.json["aps"] as? [String: Any])
        #expect((aps["alert"] as? [String: Any])?["body"] as? String == "Web bank asks you to sign in" && aps["category"] as? String == "SIGN_IN")
        #expect(received.json["requestId"] as? String == "r1")

        // Refusals: a dead token says so; an expired provider token is renewed and the notification sent again.
        server.answer(410, reason: "Unregistered")
        let gone = try await client.send(APNsNotification(title: "t", body: "b"), to: token)
        #expect(gone.status == 410 && gone.reason == "Unregistered" && gone.tokenIsInvalid)
        server.answer(400, reason: "BadDeviceToken")
        #expect(try await client.send(APNsNotification(title: "t", body: "b"), to: token).tokenIsInvalid)
        server.answer(403, reason: "ExpiredProviderToken")
        let retried = try await client.send(APNsNotification(title: "t", body: "b"), to: token)
        #expect(retried.delivered && server.received.count == 5)
        server.answer(429, reason: "TooManyRequests")
        let busy = try await client.send(APNsNotification(title: "t", body: "b"), to: token)
        #expect(!busy.delivered && !busy.tokenIsInvalid)
        await client.shutdown()
    }

    @Test func noAnswerIsATransportError() async throws {
        let provider = try await APNsProviderToken(keyPEM: Self.key.pemRepresentation, keyId: "ABC123DEFG", teamId: "TEAM123456")
        let client = APNsClient(baseURL: "https://127.0.0.1:1", topic: "t", token: provider, connectTimeout: .milliseconds(500))
        await #expect(throws: APNsError.transport("")) { try await client.send(APNsNotification(title: "t", body: "b"), to: "ab") }
        await client.shutdown()
    }
}
