import Foundation
public import Logging

/// swift-log's text lines (`StreamLogHandler`'s format: local time, level, label, the metadata sorted by key, the
/// source, the message), written to standard error with one `write(2)` per line; `touchstone serve` bootstraps it.
///
/// The difference is when the metadata is rendered: `StreamLogHandler` renders it whenever it changes, so every
/// request paid for its `request_id` (and Hummingbird's `hb.request.id`) being set, about 1.5 % of a sign-in's CPU,
/// though at the default level a sign-in writes no line. This handler renders it when a line is written.
public struct TextLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    let label: String
    let write: @Sendable ([UInt8]) -> Void

    /// A handler for `label`; `write` receives each line with its newline (tests capture it).
    public init(
        label: String,
        metadataProvider: Logger.MetadataProvider? = nil,
        write: @escaping @Sendable ([UInt8]) -> Void = JSONLogHandler.standardError
    ) {
        self.label = label
        self.metadataProvider = metadataProvider
        self.write = write
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = self.metadata
        if let provided = self.metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        var line = "\(Self.timestamp()) \(event.level)\(self.label.isEmpty ? "" : " ")\(self.label):"
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        line += " [\(event.source)] \(event.message)\n"
        self.write(Array(line.utf8))
    }

    /// Local time as `StreamLogHandler` writes it: `2026-11-24T12:00:00+0000`.
    static func timestamp() -> String {
        var now = time(nil)
        var local = tm()
        guard localtime_r(&now, &local) != nil else { return "<unknown>" }
        var buffer = [CChar](repeating: 0, count: 64)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
