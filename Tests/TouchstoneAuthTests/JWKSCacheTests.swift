import Foundation
import NIOConcurrencyHelpers
import Testing
import TouchstoneAuth
import TouchstoneTesting

/// A key set that a test changes, counting fetches; it can be made to fail.
final class ScriptedFetcher: JWKSFetching, Sendable {
    private let state = NIOLockedValueBox<(document: Data, maxAge: TimeInterval?, failing: Bool, fetches: Int)>((Data(), 300, false, 0))

    init(_ document: Data, maxAge: TimeInterval? = 300) {
        self.state.withLockedValue { $0 = (document, maxAge, false, 0) }
    }

    var fetches: Int { self.state.withLockedValue { $0.fetches } }
    func publish(_ document: Data) { self.state.withLockedValue { $0.document = document } }
    func fail(_ failing: Bool) { self.state.withLockedValue { $0.failing = failing } }

    struct Down: Error {}

    func fetchKeySet() async throws -> FetchedKeySet {
        let (document, maxAge, failing) = self.state.withLockedValue { state in
            state.fetches += 1
            return (state.document, state.maxAge, state.failing)
        }
        // Let concurrent callers pile up behind one fetch.
        try await Task.sleep(for: .milliseconds(20))
        if failing { throw Down() }
        return FetchedKeySet(data: document, maxAge: maxAge)
    }
}

struct JWKSCacheTests {
    @Test func theKeySetIsFetchedOnceAndKeptForItsMaxAge() async throws {
        let clock = ManualClock()
        let issuer = await TestIssuer()
        let fetcher = ScriptedFetcher(issuer.jwks, maxAge: 120)
        let cache = JWKSCache(fetcher: fetcher, now: { clock.now })
        #expect(try await cache.key(for: issuer.kid)?.kid == issuer.kid)
        #expect(try await cache.key(for: issuer.kid) != nil)
        #expect(fetcher.fetches == 1)
        clock.advance(by: 119)
        _ = try await cache.key(for: issuer.kid)
        #expect(fetcher.fetches == 1)
        clock.advance(by: 1)
        _ = try await cache.key(for: issuer.kid)
        #expect(fetcher.fetches == 2)
    }

    @Test func concurrentCallersShareOneFetch() async throws {
        let issuer = await TestIssuer()
        let fetcher = ScriptedFetcher(issuer.jwks)
        let cache = JWKSCache(fetcher: fetcher)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    let key = try await cache.key(for: issuer.kid)
                    #expect(key != nil)
                }
            }
            try await group.waitForAll()
        }
        #expect(fetcher.fetches == 1)
    }

    @Test func aNewKidIsPickedUpAtOnce() async throws {
        let clock = ManualClock()
        let old = await TestIssuer(kid: "old")
        let new = await TestIssuer(kid: "new")
        let fetcher = ScriptedFetcher(old.jwks)
        let cache = JWKSCache(fetcher: fetcher, now: { clock.now })
        #expect(try await cache.key(for: "old") != nil)
        fetcher.publish(try JSONEncoder().encode(PublicJWKSet(keys: [old.publicJWK, new.publicJWK])))
        // Within the max-age, an unknown kid refreshes the set.
        #expect(try await cache.key(for: "new") != nil)
        #expect(fetcher.fetches == 2)
    }

    @Test func forgedKidsCannotMakeItHammerTheIssuer() async throws {
        let clock = ManualClock()
        let issuer = await TestIssuer()
        let fetcher = ScriptedFetcher(issuer.jwks)
        let cache = JWKSCache(fetcher: fetcher, unknownKeyInterval: 60, unknownKeySpacing: 5, now: { clock.now })
        _ = try await cache.key(for: issuer.kid)
        // The same forged kid: one refresh a minute.
        for _ in 0..<50 { #expect(try await cache.key(for: "forged") == nil) }
        #expect(fetcher.fetches == 2)
        clock.advance(by: 59)
        #expect(try await cache.key(for: "forged") == nil)
        #expect(fetcher.fetches == 2)
        clock.advance(by: 1)
        #expect(try await cache.key(for: "forged") == nil)
        #expect(fetcher.fetches == 3)
        // Many different forged kids: at most one refresh per spacing.
        for index in 0..<100 { _ = try await cache.key(for: "forged-\(index)") }
        #expect(fetcher.fetches == 3)
        clock.advance(by: 5)
        for index in 100..<200 { _ = try await cache.key(for: "forged-\(index)") }
        #expect(fetcher.fetches == 4)
    }

    @Test func anUnreachableIssuerKeepsTheKeysItHadAndBacksOff() async throws {
        let clock = ManualClock()
        let issuer = await TestIssuer()
        let fetcher = ScriptedFetcher(issuer.jwks, maxAge: 60)
        let cache = JWKSCache(fetcher: fetcher, failureBackoff: 10, now: { clock.now })
        _ = try await cache.key(for: issuer.kid)
        fetcher.fail(true)
        clock.advance(by: 61)
        // Expired and the issuer is down: the cached key still verifies.
        #expect(try await cache.key(for: issuer.kid) != nil)
        #expect(try await cache.key(for: issuer.kid) != nil)
        #expect(fetcher.fetches == 2)
        clock.advance(by: 10)
        _ = try await cache.key(for: issuer.kid)
        #expect(fetcher.fetches == 3)
        fetcher.fail(false)
        clock.advance(by: 10)
        _ = try await cache.key(for: issuer.kid)
        #expect(fetcher.fetches == 4)
    }

    @Test func withNoKeysYetAnUnreachableIssuerIsAnError() async throws {
        let fetcher = ScriptedFetcher(Data())
        fetcher.fail(true)
        let cache = JWKSCache(fetcher: fetcher)
        await #expect(throws: TokenVerificationError.self) { _ = try await cache.key(for: "any") }
    }
}
