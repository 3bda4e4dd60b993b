public import AsyncHTTPClient
public import Foundation
public import NIOCore
import NIOHTTP1

/// A fetched key set and how long the issuer says it may be cached.
public struct FetchedKeySet: Sendable {
    public var data: Data
    /// From `Cache-Control: max-age`, if the issuer sent one.
    public var maxAge: TimeInterval?

    public init(data: Data, maxAge: TimeInterval?) {
        self.data = data
        self.maxAge = maxAge
    }
}

/// Fetches the issuer's JWKS document.
public protocol JWKSFetching: Sendable {
    func fetchKeySet() async throws -> FetchedKeySet
}

/// Fetches a JWKS over HTTP(S) with async-http-client.
public struct HTTPJWKSFetcher: JWKSFetching {
    public let url: String
    let client: HTTPClient
    let timeout: TimeAmount

    /// - Parameters:
    ///   - url: The key set's URL, e.g. `https://auth.example.com/.well-known/jwks.json`.
    ///   - client: The HTTP client (the shared one by default).
    ///   - timeout: How long one fetch may take.
    public init(url: String, client: HTTPClient = .shared, timeout: TimeAmount = .seconds(10)) {
        self.url = url
        self.client = client
        self.timeout = timeout
    }

    /// The JWKS URL of a Touchstone issuer: `<issuer>/.well-known/jwks.json`.
    public static func jwksURL(issuer: String) -> String {
        (issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer) + "/.well-known/jwks.json"
    }

    public func fetchKeySet() async throws -> FetchedKeySet {
        var request = HTTPClientRequest(url: self.url)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await self.client.execute(request, timeout: self.timeout)
        guard response.status == .ok else { throw FetchError(status: Int(response.status.code)) }
        let body = try await response.body.collect(upTo: 1 << 20)
        return FetchedKeySet(
            data: Data(body.readableBytesView),
            maxAge: response.headers["Cache-Control"].first.flatMap(Self.maxAge(cacheControl:))
        )
    }

    struct FetchError: Error, CustomStringConvertible {
        let status: Int
        var description: String { "the key set answered HTTP \(self.status)" }
    }

    /// `max-age=N` from a `Cache-Control` value.
    static func maxAge(cacheControl: String) -> TimeInterval? {
        for directive in cacheControl.split(separator: ",") {
            let parts = directive.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "max-age", let seconds = Int(parts[1]), seconds >= 0 {
                return TimeInterval(seconds)
            }
        }
        return nil
    }
}

/// The issuer's public keys, fetched on first use and kept for the key set's `max-age`.
///
/// - A token whose `kid` is not in the cached set triggers a refresh (so a key rotation on the issuer is picked up
///   without a restart), but at most once per ``unknownKeyInterval`` for each `kid` and at most once per
///   ``unknownKeySpacing`` in all, so forged `kid`s cannot make it hammer the issuer.
/// - Concurrent refreshes share one request.
/// - When the issuer cannot be reached the keys already fetched stay in use; a failed fetch is retried after
///   ``failureBackoff``.
public actor JWKSCache: VerificationKeyProvider {
    let fetcher: any JWKSFetching
    let now: @Sendable () -> Date
    /// Used when the issuer sends no `max-age`; any `max-age` is kept between 5 s and a day.
    public let defaultMaxAge: TimeInterval
    public let unknownKeyInterval: TimeInterval
    public let unknownKeySpacing: TimeInterval
    public let failureBackoff: TimeInterval

    private var keys: [String: VerificationKey] = [:]
    private var loaded = false
    private var expiresAt = Date.distantPast
    private var lastFailure: Date?
    private var lastUnknownKeyRefresh = Date.distantPast
    private var triedKids: [String: Date] = [:]
    private var inFlight: Task<Void, any Error>?
    /// How many fetches were made (for tests and metrics).
    public private(set) var fetchCount = 0

    public init(
        fetcher: any JWKSFetching,
        defaultMaxAge: TimeInterval = 300,
        unknownKeyInterval: TimeInterval = 60,
        unknownKeySpacing: TimeInterval = 5,
        failureBackoff: TimeInterval = 10,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.fetcher = fetcher
        self.defaultMaxAge = defaultMaxAge
        self.unknownKeyInterval = unknownKeyInterval
        self.unknownKeySpacing = unknownKeySpacing
        self.failureBackoff = failureBackoff
        self.now = now
    }

    /// A cache of `<issuer>/.well-known/jwks.json`, fetched with async-http-client.
    public init(issuer: String, client: HTTPClient = .shared) {
        self.init(fetcher: HTTPJWKSFetcher(url: HTTPJWKSFetcher.jwksURL(issuer: issuer), client: client))
    }

    public func key(for kid: String) async throws(TokenVerificationError) -> VerificationKey? {
        let now = self.now()
        if !self.loaded || now >= self.expiresAt {
            let failure = await self.refreshUnlessBackingOff(at: now)
            if !self.loaded, let failure { throw TokenVerificationError(.keySetUnavailable, "the issuer's key set: \(failure)") }
        }
        if let key = self.keys[kid] { return key }
        // An unknown kid: perhaps a key the issuer published since the last fetch.
        if let tried = self.triedKids[kid], now.timeIntervalSince(tried) < self.unknownKeyInterval { return nil }
        guard now.timeIntervalSince(self.lastUnknownKeyRefresh) >= self.unknownKeySpacing else { return nil }
        if self.triedKids.count >= 1024 {
            self.triedKids = self.triedKids.filter { now.timeIntervalSince($0.value) < self.unknownKeyInterval }
        }
        self.triedKids[kid] = now
        self.lastUnknownKeyRefresh = now
        _ = await self.refreshUnlessBackingOff(at: now)
        return self.keys[kid]
    }

    /// Refreshes (sharing a refresh under way), unless the last failure is too recent; returns the failure, if any.
    private func refreshUnlessBackingOff(at now: Date) async -> (any Error)? {
        if let lastFailure, now.timeIntervalSince(lastFailure) < self.failureBackoff, self.inFlight == nil {
            return KeySetUnavailable()
        }
        let task: Task<Void, any Error>
        if let inFlight {
            task = inFlight
        } else {
            task = Task { try await self.fetchAndStore() }
            self.inFlight = task
        }
        defer { if self.inFlight == task { self.inFlight = nil } }
        do {
            try await task.value
            return nil
        } catch {
            return error
        }
    }

    private func fetchAndStore() async throws {
        self.fetchCount += 1
        do {
            let fetched = try await self.fetcher.fetchKeySet()
            let keys = try await VerificationKey.keys(fromJWKS: fetched.data)
            self.keys = Dictionary(keys.map { ($0.kid, $0) }, uniquingKeysWith: { first, _ in first })
            self.loaded = true
            self.lastFailure = nil
            let maxAge = min(max(fetched.maxAge ?? self.defaultMaxAge, 5), 86_400)
            self.expiresAt = self.now().addingTimeInterval(maxAge)
        } catch {
            self.lastFailure = self.now()
            throw error
        }
    }

    struct KeySetUnavailable: Error, CustomStringConvertible {
        var description: String { "the last fetch failed; retrying later" }
    }
}
