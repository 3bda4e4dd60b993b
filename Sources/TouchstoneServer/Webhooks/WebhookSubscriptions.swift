import Logging
import NIOConcurrencyHelpers
import TouchstoneStore
import TouchstoneWebhooks

/// The event types some enabled endpoint subscribes to, as this instance last read them: an event of another type
/// is not announced at all (no body is made, no outbox statement runs), so webhooks cost a sign-in nothing until an
/// endpoint wants its type.
///
/// The outbox statement itself still checks each endpoint's current state; this only decides whether to run it. The
/// set is read at start, after every change made through this instance, and every ``refreshInterval`` (a change made
/// by the CLI or another instance applies within that time, inside the 10 seconds docs/webhooks.md promises). Until
/// a read has succeeded, every type is announced.
final class WebhookSubscriptions: Sendable {
    static let refreshInterval: Duration = .seconds(5)
    /// nil: unknown, every type announced.
    private let types = NIOLockedValueBox<Set<String>?>(nil)

    init() {}

    /// Whether an event of `type` may have a subscriber.
    func announces(_ type: String) -> Bool {
        self.types.withLockedValue { types in
            guard let types else { return true }
            return types.contains(type) || types.contains(WebhookEventType.everyType)
        }
    }

    /// Reads the subscribed types; on failure keeps what it had (or every type, if it had nothing).
    func refresh(from store: any WebhookStore, logger: Logger) async {
        do {
            let types = try await store.webhookSubscribedTypes()
            self.types.withLockedValue { $0 = types }
        } catch {
            logger.debug("webhook subscriptions not read: \(error)")
        }
    }
}
