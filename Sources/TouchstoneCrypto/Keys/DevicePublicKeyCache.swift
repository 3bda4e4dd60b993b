public import Foundation

/// A bounded map from parsed-once inputs to their parsed values, safe to share between threads.
///
/// It holds at most `capacity` values in two generations: lookups hit the current one, or the previous one (and move
/// the value forward); when the current generation is full it becomes the previous one and the oldest is dropped.
/// That approximates least-recently-used eviction with two dictionaries and no per-entry bookkeeping. A capacity of 0
/// disables caching.
public final class ParsedValueCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    public let capacity: Int
    // Usable from inlinable code: the lookups below are specialised in the modules that use the cache (called from
    // TouchstoneWebAuthn unspecialised, they looked up generic metadata at run time on every call: it showed in the
    // profile of `bench verify`).
    @usableFromInline let lock = NSLock()
    @usableFromInline var current: [Key: Value] = [:]
    @usableFromInline var previous: [Key: Value] = [:]

    public init(capacity: Int) {
        precondition(capacity >= 0, "capacity must not be negative")
        self.capacity = capacity
    }

    /// The cached value for `key`, or the result of `parse`, kept while it stays in use. Errors are not cached.
    @inlinable
    public func value<Failure: Error>(for key: Key, parse: () throws(Failure) -> Value) throws(Failure) -> Value {
        guard self.capacity > 0 else { return try parse() }
        if let value = self.cached(key) { return value }
        // Parsed outside the lock: two threads may parse the same input once each, which is harmless.
        let value = try parse()
        self.lock.lock()
        defer { self.lock.unlock() }
        self.insert(value, for: key)
        return value
    }

    /// The value held for `key`, if any (kept while it stays in use, like a hit of ``value(for:parse:)``).
    public func cachedValue(for key: Key) -> Value? {
        guard self.capacity > 0 else { return nil }
        return self.cached(key)
    }

    /// Holds `value` for `key`, replacing what was held.
    public func set(_ value: Value, for key: Key) {
        guard self.capacity > 0 else { return }
        self.lock.lock()
        defer { self.lock.unlock() }
        self.previous.removeValue(forKey: key)
        self.insert(value, for: key)
    }

    /// Values held now.
    public var count: Int {
        self.lock.withLock { self.current.count + self.previous.count }
    }

    /// Whether a value is held for `key` (without moving it forward).
    public func contains(_ key: Key) -> Bool {
        self.lock.withLock { self.current[key] != nil || self.previous[key] != nil }
    }

    @inlinable
    func cached(_ key: Key) -> Value? {
        // lock()/unlock(): Foundation's `withLock` cannot be called from inlinable code on Linux.
        self.lock.lock()
        defer { self.lock.unlock() }
        if let value = self.current[key] { return value }
        guard let value = self.previous.removeValue(forKey: key) else { return nil }
        self.insert(value, for: key)
        return value
    }

    /// Call with the lock held.
    @inlinable
    func insert(_ value: Value, for key: Key) {
        let generation = max(1, self.capacity / 2)
        if self.current.count >= generation {
            self.previous = self.current
            self.current = [:]
            self.current.reserveCapacity(generation)
        }
        self.current[key] = value
    }
}

/// Bytes as a dictionary key, hashed in one call over the buffer (an array of bytes hashes byte by byte).
public struct BytesKey: Hashable, Sendable {
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    @inlinable
    public func hash(into hasher: inout Hasher) {
        self.bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}

/// Parsed device keys, by algorithm and stored bytes.
///
/// Parsing a stored key is not free: a P-256 point is decompressed and checked to be on the curve, and an RSA key's
/// modulus is checked, which costs as much as the signature verification that follows. A server verifying sign-ins
/// keeps the keys it has parsed.
public final class DevicePublicKeyCache: Sendable {
    private struct Key: Hashable, Sendable {
        var algorithm: SignatureAlgorithm
        var bytes: BytesKey
    }

    private let cache: ParsedValueCache<Key, DevicePublicKey>

    public var capacity: Int { self.cache.capacity }

    /// - Parameter capacity: Keys held at most (0 parses every time).
    public init(capacity: Int = 10_000) {
        self.cache = ParsedValueCache(capacity: capacity)
    }

    /// The parsed key for `bytes` (see ``DevicePublicKey/init(bytes:algorithm:)``), parsed once while it stays cached.
    public func key(bytes: [UInt8], algorithm: SignatureAlgorithm) throws(DeviceKeyError) -> DevicePublicKey {
        try self.cache.value(for: Key(algorithm: algorithm, bytes: BytesKey(bytes))) { () throws(DeviceKeyError) in
            try DevicePublicKey(bytes: bytes, algorithm: algorithm)
        }
    }

    /// Keys held now.
    public var count: Int { self.cache.count }

    /// Whether the key is held now.
    public func containsKey(bytes: [UInt8], algorithm: SignatureAlgorithm) -> Bool {
        self.cache.contains(Key(algorithm: algorithm, bytes: BytesKey(bytes)))
    }
}
