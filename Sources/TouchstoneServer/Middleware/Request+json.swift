import Foundation
import Hummingbird

extension Request {
    /// Decodes the JSON body as `T`, answering 400 `invalid_request` naming the offending field, and 413 when the body
    /// is larger than the context allows.
    func decodeJSON<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T {
        try JSONDecoder().decodeOrInvalid(T.self, from: Data(try await self.collectJSONBody(context: context)))
    }

    /// The body's bytes: 413 when larger than the context allows, 400 `invalid_request` when empty.
    func collectJSONBody(context: some RequestContext) async throws -> [UInt8] {
        let buffer: ByteBuffer
        do {
            buffer = try await self.body.collect(upTo: context.maxUploadSize)
        } catch {
            throw APIError.payloadTooLarge(limit: context.maxUploadSize)
        }
        guard buffer.readableBytes > 0 else { throw APIError.invalidRequest("request body must be a JSON object") }
        return Array(buffer.readableBytesView)
    }
}

extension JSONDecoder {
    /// Decodes `T`, turning every failure into 400 `invalid_request` naming the field.
    func decodeOrInvalid<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        do {
            return try self.decode(T.self, from: data)
        } catch let error as DecodingError {
            throw APIError.invalidRequest(Self.describe(error))
        } catch let error as APIError {
            throw error
        } catch {
            throw APIError.invalidRequest("request body is not valid JSON")
        }
    }

    private static func describe(_ error: DecodingError) -> String {
        func path(_ codingPath: [any CodingKey], _ key: (any CodingKey)? = nil) -> String {
            let keys = codingPath + (key.map { [$0] } ?? [])
            return keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field '\(path(context.codingPath, key))'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            let field = path(context.codingPath)
            return field.isEmpty ? "request body must be a JSON object" : "field '\(field)' has the wrong type"
        case .dataCorrupted(let context):
            let field = path(context.codingPath)
            if let validation = context.underlyingError as? FieldError { return validation.message }
            return field.isEmpty ? "request body is not valid JSON" : "field '\(field)' is invalid"
        @unknown default:
            return "request body is invalid"
        }
    }
}

/// A validation failure raised while decoding a field.
struct FieldError: Error {
    var message: String
}

extension KeyedDecodingContainer {
    /// Decodes a required string, rejecting empty values and values longer than `maxLength`.
    func decodeString(_ key: Key, maxLength: Int = 1024, allowEmpty: Bool = false) throws -> String {
        let value = try self.decode(String.self, forKey: key)
        try Self.check(value, key, maxLength: maxLength, allowEmpty: allowEmpty)
        return value
    }

    /// Decodes an optional string with the same limits; `null` and absence both give `nil`.
    func decodeStringIfPresent(_ key: Key, maxLength: Int = 1024) throws -> String? {
        guard let value = try self.decodeIfPresent(String.self, forKey: key) else { return nil }
        try Self.check(value, key, maxLength: maxLength, allowEmpty: false)
        return value
    }

    private static func check(_ value: String, _ key: Key, maxLength: Int, allowEmpty: Bool) throws {
        if !allowEmpty && value.isEmpty {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [key], debugDescription: "", underlyingError: FieldError(message: "field '\(key.stringValue)' must not be empty"))
            )
        }
        if value.utf8.count > maxLength {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [key],
                    debugDescription: "",
                    underlyingError: FieldError(message: "field '\(key.stringValue)' is longer than \(maxLength) bytes")
                )
            )
        }
    }
}
