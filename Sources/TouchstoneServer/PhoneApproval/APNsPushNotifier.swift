import Foundation
import Logging
import NIOSSL
import ServiceLifecycle
import TouchstoneAPNs
import TouchstoneStore

/// Tells an account's phones of a new sign-in request with Apple push (issue #34): one alert per registration with an
/// APNs token. The notification carries the request's id and who asks, never a secret; a token Apple no longer
/// accepts is forgotten.
struct APNsPushNotifier: PushNotifier {
    let client: APNsClient
    let store: any PhoneApprovalStore
    let logger: Logger
    let metrics: ServerMetrics?

    /// The notifier for `settings`; throws when the key cannot be used (the server refuses to start).
    static func make(_ settings: APNsSettings, store: any PhoneApprovalStore, logger: Logger, metrics: ServerMetrics?) async throws -> APNsPushNotifier {
        let token: APNsProviderToken
        do {
            token = try await APNsProviderToken(keyPEM: settings.keyPEM, keyId: settings.keyId, teamId: settings.teamId)
        } catch let error as APNsError {
            throw ConfigurationError("TOUCHSTONE_APNS_KEY_FILE", "(\(error.message))")
        }
        var roots: [NIOSSLCertificate]?
        if let pem = settings.trustRootsPEM {
            do {
                roots = try NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))
            } catch {
                throw ConfigurationError("TOUCHSTONE_APNS_CA_FILE", "(not PEM certificates)")
            }
        }
        let client = APNsClient(baseURL: settings.url, topic: settings.topic, token: token, trustRoots: roots)
        return APNsPushNotifier(client: client, store: store, logger: logger, metrics: metrics)
    }

    /// Apple did not take some of the notifications for a reason that may pass (no answer, 429 or 5xx): the caller
    /// tries again later (the deferred push's record stays). A refusal that will not pass (400, 403, a dead token) is
    /// logged and not retried.
    struct Undelivered: Error, CustomStringConvertible {
        var count: Int
        var description: String { "\(self.count) notification(s) not taken by Apple; tried again later" }
    }

    func announce(_ request: SignInRequestRecord, userId: String) async throws {
        var transient = 0
        let channels = try await self.store.deviceChannels(userId: userId).filter { $0.pushPlatform == "apns" && $0.pushToken != nil }
        let body = request.bindingMessage.map { "\(request.clientName): \($0)" } ?? "\(request.clientName) asks to sign you in. Open to approve or decline."
        for channel in channels {
            guard let token = channel.pushToken else { continue }
            let notification = APNsNotification(
                title: "Sign-in request",
                body: body,
                category: "touchstone.sign-in",
                data: ["requestId": request.id, "registrationId": channel.registrationId],
                expiresAt: request.expiresAt,
                collapseId: request.id
            )
            do {
                let answer = try await self.client.send(notification, to: token)
                if answer.tokenIsInvalid {
                    try await self.store.clearPushToken(registrationId: channel.registrationId, token: token)
                }
                self.metrics?.pushed(answer.delivered ? "delivered" : answer.tokenIsInvalid ? "token_invalid" : "refused")
                if answer.tokenIsInvalid {
                    self.logger.info("push: registration \(channel.registrationId)'s APNs token is no longer valid (\(answer.reason ?? "\(answer.status)")); forgotten")
                } else if !answer.delivered {
                    self.logger.warning("push: Apple refused a notification for registration \(channel.registrationId): \(answer.status) \(answer.reason ?? "")")
                    if answer.status == 429 || answer.status >= 500 { transient += 1 }
                }
            } catch {
                self.metrics?.pushed("failed")
                self.logger.warning("push: no answer from Apple for registration \(channel.registrationId): \(error)")
                transient += 1
            }
        }
        if transient > 0 { throw Undelivered(count: transient) }
    }
}

/// Closes the push client's connection when the server stops.
struct PushClientService: Service {
    let client: APNsClient

    func run() async throws {
        try? await gracefulShutdown()
        await self.client.shutdown()
    }
}
