import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOHTTP1
import Synchronization
import TouchstoneStore
import TouchstoneWebAuthn
import X509

/// The FIDO Metadata Service BLOB every instance uses, kept fresh in the background.
///
/// - Every instance uses the newest BLOB stored in the database (verified again when read: signature, chain, serial
///   number), so all of them judge authenticators alike.
/// - With a source (`TOUCHSTONE_MDS_FILE` or `TOUCHSTONE_MDS_URL`), an instance fetches a new BLOB when none is stored,
///   when the one in use reaches its `nextUpdate`, or when the file changes; a fetched BLOB must verify, be newer than
///   the one in use and not be stale, and is then stored for the others. A failed fetch is retried after
///   ``AuthenticatorMetadataSettings/retryInterval``.
/// - Ceremonies read ``current`` and never wait for any of this: a BLOB past its `nextUpdate` that cannot be replaced
///   stays in use (and is reported as stale) rather than leaving compromised models unrecognised.
final class AuthenticatorMetadataService: Sendable {
    let settings: AuthenticatorMetadataSettings
    let store: any MetadataStore
    let now: @Sendable () -> Date
    let logger: Logger
    let metrics: ServerMetrics?
    /// Reads a URL's body (injected by tests to count or fail fetches; by default HTTP GET with AsyncHTTPClient).
    let download: @Sendable (String) async throws -> String

    struct State {
        var blob: MetadataBLOB?
        var storedAt: Date?
        var source: String?
        /// When the source is next read (nil: at the next refresh).
        var nextFetch: Date?
        /// The file's modification time and size when it was last read.
        var fileStamp: FileStamp?
        var lastError: String?
    }

    struct FileStamp: Equatable {
        var modified: Date
        var size: Int
    }

    private let state = Mutex(State())

    init(
        settings: AuthenticatorMetadataSettings,
        store: any MetadataStore,
        now: @escaping @Sendable () -> Date,
        logger: Logger,
        metrics: ServerMetrics? = nil,
        download: (@Sendable (String) async throws -> String)? = nil
    ) {
        self.settings = settings
        self.store = store
        self.now = now
        self.logger = logger
        self.metrics = metrics
        self.download = download ?? Self.httpGet
    }

    /// The BLOB in use, if any.
    var current: MetadataBLOB? { self.state.withLock { $0.blob } }

    /// What the admin API shows.
    var status: State { self.state.withLock { $0 } }

    /// One refresh: adopt a newer stored BLOB, then fetch from the source if one is due. Never throws: failures are
    /// logged, remembered for the admin API and retried later.
    ///
    /// - Parameters:
    ///   - download: Whether a URL source may be fetched now (at startup it is left to the background).
    ///   - force: Read the source even if no new BLOB is due (an operator's "refresh now").
    func refresh(download: Bool = true, force: Bool = false) async {
        await self.adoptStored()
        guard let source = self.settings.file ?? self.settings.url else { return }
        if self.settings.file == nil && !download { return }
        let now = self.now()
        let due: Bool = self.state.withLock { state in
            guard let blob = state.blob else { return state.nextFetch.map { now >= $0 } ?? true }
            if let next = state.nextFetch { return now >= next }
            return now >= blob.nextUpdate
        }
        let fileChanged = self.settings.file.map { path in self.fileStamp(path) != self.state.withLock { $0.fileStamp } } ?? false
        guard due || fileChanged || force else { return }
        do {
            try await self.fetch(from: source, at: now)
        } catch {
            let message = String(describing: error)
            self.state.withLock { state in
                state.lastError = message
                state.nextFetch = now.addingTimeInterval(self.settings.retryInterval.timeInterval)
            }
            self.metrics?.metadataRefresh(outcome: "failure")
            self.logger.warning("authenticator metadata not refreshed from \(source): \(message)")
        }
    }

    /// Reads the stored BLOB and uses it if it is newer than the one in use.
    private func adoptStored() async {
        let inUse = self.current?.number
        let record: MetadataBLOBRecord?
        do {
            // The number first: the BLOB (megabytes) is read only when it is newer than the one in use.
            guard let number = try await self.store.metadataBLOBNumber(), inUse.map({ Int(number) > $0 }) ?? true else { return }
            record = try await self.store.metadataBLOB()
        } catch {
            self.logger.warning("authenticator metadata could not be read from the database: \(error)")
            return
        }
        guard let record, inUse.map({ Int(record.number) > $0 }) ?? true else { return }
        do {
            // Stored only after a full verification; read again in case the database was written by someone else.
            let blob = try await MetadataBLOB.verify(
                jws: record.blob,
                roots: self.settings.roots,
                at: self.now(),
                newerThan: inUse,
                acceptStale: true
            )
            self.use(blob, storedAt: record.storedAt, source: record.source)
        } catch {
            self.logger.error("the stored authenticator metadata BLOB \(record.number) does not verify: \(error)")
        }
    }

    private func fetch(from source: String, at now: Date) async throws {
        let text: String
        var stamp: FileStamp?
        if let path = self.settings.file {
            stamp = self.fileStamp(path)
            text = try String(contentsOfFile: path, encoding: .utf8)
        } else {
            text = try await self.download(source)
        }
        let blob = try await MetadataBLOB.verify(jws: text, roots: self.settings.roots, at: now)
        if let inUse = self.current?.number, blob.number <= inUse {
            // The source has not published a newer BLOB yet, or offers an older one (refused: a downgrade).
            let downgrade = blob.number < inUse
            self.state.withLock { state in
                state.fileStamp = stamp
                state.nextFetch = now.addingTimeInterval(self.settings.retryInterval.timeInterval)
                state.lastError = downgrade ? "refused BLOB \(blob.number): older than BLOB \(inUse) in use" : nil
            }
            self.metrics?.metadataRefresh(outcome: downgrade ? "refused" : "unchanged")
            if downgrade { self.logger.warning("authenticator metadata from \(source) refused: BLOB \(blob.number) is older than \(inUse)") }
            return
        }
        let record = MetadataBLOBRecord(number: Int64(blob.number), nextUpdate: blob.nextUpdate, blob: blob.jws, source: source, storedAt: now)
        if try await !self.store.saveMetadataBLOB(record) {
            // Another instance stored this one (or a newer one) first: use what is stored.
            await self.adoptStored()
        } else {
            self.use(blob, storedAt: now, source: source)
        }
        self.state.withLock { state in
            state.fileStamp = stamp
            state.nextFetch = nil
            state.lastError = nil
        }
        self.metrics?.metadataRefresh(outcome: "success")
        self.logger.info("authenticator metadata BLOB \(blob.number) loaded from \(source): \(blob.entries.count) entries, next update \(blob.nextUpdate)")

    }

    private func use(_ blob: MetadataBLOB, storedAt: Date, source: String) {
        self.state.withLock { state in
            guard (state.blob?.number ?? Int.min) < blob.number else { return }
            state.blob = blob
            state.storedAt = storedAt
            state.source = source
        }
        self.metrics?.metadataLoaded(number: blob.number, nextUpdate: blob.nextUpdate)
    }

    private func fileStamp(_ path: String) -> FileStamp? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path) else { return nil }
        return FileStamp(modified: attributes[.modificationDate] as? Date ?? .distantPast, size: (attributes[.size] as? NSNumber)?.intValue ?? -1)
    }

    /// GET with AsyncHTTPClient: a 200 answer's body, at most ``MetadataBLOB/maximumPayloadSize`` × 4/3 bytes.
    static func httpGet(_ url: String) async throws -> String {
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/jwt, */*")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
        guard response.status == .ok else { throw MetadataDownloadError(message: "\(url) answered \(response.status.code)") }
        let body = try await response.body.collect(upTo: MetadataBLOB.maximumPayloadSize / 3 * 4 + 64 * 1024)
        return String(buffer: body)
    }
}

struct MetadataDownloadError: Error, CustomStringConvertible {
    var message: String
    var description: String { self.message }
}
