import Foundation
import TouchstoneStore

/// When signing keys are made, sign, and stop being published: pure rules over the stored key set and the time.
///
/// - The key that signs is the newest generation whose activation time has come.
/// - A new key is made `publicationLead` before it is due to sign: when the signing key has signed for
///   `rotationInterval - publicationLead` (scheduled), or on demand.
/// - A key stops signing when a newer one activates; it stays published `retiredPublication` longer (the longest
///   token lifetime plus leeway, or the receipt retention if longer), so every token it signed can still be verified
///   until it expires, and receipts for days after.
struct SigningKeySchedule: Sendable {
    var rotationInterval: TimeInterval
    var publicationLead: TimeInterval
    var retiredPublication: TimeInterval

    init(settings: TokenSettings, leeway: TimeInterval = 60) {
        self.rotationInterval = settings.rotationInterval.timeInterval
        self.publicationLead = settings.publicationLead.timeInterval
        self.retiredPublication = max(settings.accessTokenLifetime.timeInterval + leeway, settings.receiptKeyRetention.timeInterval)
    }

    init(rotationInterval: TimeInterval, publicationLead: TimeInterval, retiredPublication: TimeInterval) {
        self.rotationInterval = rotationInterval
        self.publicationLead = publicationLead
        self.retiredPublication = retiredPublication
    }

    /// The key that signs at `now`.
    func active(_ keys: [SigningKeyRecord], at now: Date) -> SigningKeyRecord? {
        keys.filter { $0.activatesAt <= now }.max { $0.generation < $1.generation }
    }

    /// When `key` stopped signing (a newer generation activated), if it has by `now`.
    func retiredAt(_ key: SigningKeyRecord, among keys: [SigningKeyRecord], at now: Date) -> Date? {
        keys.filter { $0.generation > key.generation && $0.activatesAt <= now }.map(\.activatesAt).min()
    }

    /// The keys to publish at `now`: pending, active, and retired within `retiredPublication`.
    func published(_ keys: [SigningKeyRecord], at now: Date) -> [SigningKeyRecord] {
        keys.filter { key in
            guard let retired = self.retiredAt(key, among: keys, at: now) else { return true }
            return now < retired.addingTimeInterval(self.retiredPublication)
        }
    }

    /// When a key made now should start signing, if one is due: at once when there is none, after the lead time
    /// when the newest key is old enough; `nil` while a newer key is pending or the current one is young.
    func due(_ keys: [SigningKeyRecord], at now: Date) -> Date? {
        guard let newest = keys.max(by: { $0.generation < $1.generation }) else { return now }
        guard newest.activatesAt <= now else { return nil }
        let next = newest.activatesAt.addingTimeInterval(self.rotationInterval - self.publicationLead)
        return now >= next ? now.addingTimeInterval(self.publicationLead) : nil
    }
}
