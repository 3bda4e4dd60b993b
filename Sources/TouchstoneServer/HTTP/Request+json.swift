import Foundation
import Hummingbird
import TouchstoneWebAuthn

extension Request {
    /// Decodes the JSON body as `T`, answering 400 `invalid_request` naming the offending field, and 413 when the body
    /// is larger than the context allows.
    func decodeJSON<T: Decodable>(as type: T.Type, context: some RequestContext) async throws -> T {
        try JSONDecoder().decodeOrInvalid(T.self, from: Data(try await self.collectJSONBody(context: context)))
    }

    /// An `AuthenticationResponseJSON` body (`credential.toJSON()` of a passkey assertion), read with the WebAuthn
    /// module's strict parser instead of JSONDecoder: 400 `invalid_request` when it is not one.
    func decodeAuthenticationResponse(context: some RequestContext) async throws -> AuthenticationResponseJSON {
        do {
            return try AuthenticationResponseJSON(json: try await self.collectJSONBody(context: context))
        } catch let error as AuthenticationResponseJSON.ShapeError {
            throw APIError.invalidRequest(error.description)
        }
    }

    /// An `application/x-www-form-urlencoded` body as text (empty when there is none): 413 when larger than the
    /// context allows.
    func collectFormBody(context: some RequestContext) async throws -> String {
        do {
            let buffer = try await self.body.collect(upTo: context.maxUploadSize)
            return String(buffer: buffer)
        } catch {
            throw APIError.payloadTooLarge(limit: context.maxUploadSize)
        }
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
    /// Decodes a required string, rejecting control characters (``InputRules/noControlCharacters(_:field:kind:allowLineBreaks:)``),
    /// empty values and values longer than `maxLength` code points (what the OpenAPI document's `maxLength` counts).
    /// `allowLineBreaks` lets CR and LF through (a PEM key's lines).
    func decodeString(_ key: Key, maxLength: Int = 1024, allowEmpty: Bool = false, allowLineBreaks: Bool = false) throws -> String {
        let value = try self.decode(String.self, forKey: key)
        try Self.check(value, key, maxLength: maxLength, allowEmpty: allowEmpty, controls: allowLineBreaks ? .lineBreaks : .none)
        return value
    }

    /// Decodes an optional string with the same limits; `null` and absence both give `nil`.
    func decodeStringIfPresent(_ key: Key, maxLength: Int = 1024, allowLineBreaks: Bool = false) throws -> String? {
        guard let value = try self.decodeIfPresent(String.self, forKey: key) else { return nil }
        try Self.check(value, key, maxLength: maxLength, allowEmpty: false, controls: allowLineBreaks ? .lineBreaks : .none)
        return value
    }

    /// Decodes a required string and passes it through one of the ``InputRules`` (checked before anything else sees
    /// it); `maxLength` bounds the code points before the rule runs. Every rule refuses control characters itself,
    /// with its own message.
    func decodeString<T>(_ key: Key, maxLength: Int, rule: (String) throws(FieldError) -> T) throws -> T {
        let value = try self.decode(String.self, forKey: key)
        try Self.check(value, key, maxLength: maxLength, allowEmpty: true, controls: .checkedByRule)
        do {
            return try rule(value)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: [key], debugDescription: "", underlyingError: error))
        }
    }

    /// ``decodeString(_:maxLength:rule:)`` for an optional field; `null` and absence both give `nil`.
    func decodeStringIfPresent<T>(_ key: Key, maxLength: Int, rule: (String) throws(FieldError) -> T) throws -> T? {
        guard try self.decodeIfPresent(String.self, forKey: key) != nil else { return nil }
        return try self.decodeString(key, maxLength: maxLength, rule: rule)
    }

    /// Decodes an optional whole number. Foundation's decoder reports a number that does not fit the type (`1.5`, or
    /// one past `Int64`) as invalid JSON without naming the field, so the number is read as a decimal and checked here:
    /// the error names the field, as for every other wrong value.
    func decodeIntegerIfPresent(_ key: Key) throws -> Int? {
        guard let value = try self.decodeIfPresent(Decimal.self, forKey: key) else { return nil }
        var rounded = Decimal()
        var copy = value
        NSDecimalRound(&rounded, &copy, 0, .plain)
        guard rounded == value else { throw Self.fieldError(key, "field '\(key.stringValue)' must be a whole number") }
        guard value >= Decimal(Int64.min), value <= Decimal(Int64.max), let integer = Int(exactly: NSDecimalNumber(decimal: value).int64Value)
        else {
            throw Self.fieldError(key, "field '\(key.stringValue)' is out of range")
        }
        return integer
    }

    private static func fieldError(_ key: Key, _ message: String) -> DecodingError {
        DecodingError.dataCorrupted(.init(codingPath: [key], debugDescription: "", underlyingError: FieldError(message: message)))
    }

    /// An email address (``InputRules/email(_:field:)``), normalised. The rule counts its 254 characters as code
    /// points (as the document's `maxLength` does), first, so the bound here is only the body's.
    func decodeEmail(_ key: Key) throws -> String {
        try self.decodeString(key, maxLength: Self.emailBytesBound) { (text) throws(FieldError) in try InputRules.email(text, field: key.stringValue) }
    }

    /// ``decodeEmail(_:)`` for an optional field.
    func decodeEmailIfPresent(_ key: Key) throws -> String? {
        try self.decodeStringIfPresent(key, maxLength: Self.emailBytesBound) { (text) throws(FieldError) in
            try InputRules.email(text, field: key.stringValue)
        }
    }

    static var emailBytesBound: Int { 64 * 1024 }

    /// A password (``InputRules/password(_:field:)``); `isNew` adds the minimum length of a password being set.
    func decodePassword(_ key: Key, isNew: Bool) throws -> InputRules.Password {
        try self.decodeString(key, maxLength: 4 * InputRules.maximumPasswordCharacters) { (text) throws(FieldError) in
            isNew ? try InputRules.newPassword(text, field: key.stringValue) : try InputRules.password(text, field: key.stringValue)
        }
    }

    /// A name shown to people (``InputRules/displayText(_:field:maxLength:)``), optional.
    func decodeDisplayTextIfPresent(_ key: Key, maxLength: Int = 200) throws -> String? {
        try self.decodeStringIfPresent(key, maxLength: maxLength * 4) { (text) throws(FieldError) in
            try InputRules.displayText(text, field: key.stringValue, maxLength: maxLength)
        }
    }

    /// Which control characters a string may hold: none, CR and LF, or whatever its rule decides.
    private enum Controls { case none, lineBreaks, checkedByRule }

    private static func check(_ value: String, _ key: Key, maxLength: Int, allowEmpty: Bool, controls: Controls) throws {
        if controls != .checkedByRule {
            do throws(FieldError) {
                try InputRules.noControlCharacters(value, field: key.stringValue, allowLineBreaks: controls == .lineBreaks)
            } catch {
                throw DecodingError.dataCorrupted(.init(codingPath: [key], debugDescription: "", underlyingError: error))
            }
        }
        if !allowEmpty && value.isEmpty {
            throw DecodingError.dataCorrupted(
                .init(codingPath: [key], debugDescription: "", underlyingError: FieldError(message: "field '\(key.stringValue)' must not be empty"))
            )
        }
        if InputRules.isLonger(value, than: maxLength) {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [key],
                    debugDescription: "",
                    underlyingError: FieldError(message: "field '\(key.stringValue)' is longer than \(maxLength) characters")
                )
            )
        }
    }
}
