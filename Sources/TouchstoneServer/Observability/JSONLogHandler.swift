import Foundation
public import Logging

/// How the server writes its log (`TOUCHSTONE_LOG_FORMAT`).
public enum LogFormat: String, Sendable, CaseIterable {
    /// swift-log's default text lines.
    case text
    /// One JSON object per line: `time`, `level`, `logger`, `message`, then the metadata (`request_id`, `method`,
    /// `route`, `status`, `duration_ms` on request lines).
    case json
}

/// A swift-log handler writing one JSON object per line to a stream (standard error by default).
public struct JSONLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info
    public var metadataProvider: Logger.MetadataProvider?
    let label: String
    let write: @Sendable ([UInt8]) -> Void

    /// A handler for `label`; `write` receives each line with its newline (tests capture it).
    public init(label: String, write: @escaping @Sendable ([UInt8]) -> Void = JSONLogHandler.standardError) {
        self.label = label
        self.write = write
    }

    public static let standardError: @Sendable ([UInt8]) -> Void = { line in
        line.withUnsafeBufferPointer { buffer in
            // One write(2) per line: lines of concurrent requests do not interleave (below PIPE_BUF, and in practice).
            _ = Foundation.write(2, buffer.baseAddress, buffer.count)
        }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { self.metadata[key] }
        set { self.metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var object: [String: Any] = [:]
        var merged = self.metadata
        if let provided = self.metadataProvider?.get() { merged.merge(provided) { _, new in new } }
        if let metadata = event.metadata { merged.merge(metadata) { _, new in new } }
        // An event's error under the keys the text format uses (swift-log's `StreamLogHandler` writes the same two).
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        for (key, value) in merged { object[key] = Self.json(value) }
        object["time"] = Date().rfc3339
        object["level"] = event.level.rawValue
        object["logger"] = self.label
        object["message"] = event.message.description
        guard var line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]) else { return }
        line.append(0x0A)
        self.write(Array(line))
    }

    static func json(_ value: Logger.Metadata.Value) -> Any {
        switch value {
        case .string(let text): text
        case .stringConvertible(let value): value.description
        case .array(let values): values.map(Self.json)
        case .dictionary(let values): values.mapValues(Self.json)
        }
    }
}
