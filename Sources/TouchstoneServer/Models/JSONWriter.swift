import NIOCore

/// A response body that writes its own JSON, without `JSONEncoder`: the sign-in's answers (``SignedIn``,
/// ``ChallengeResponse``, the passkey request options). `JSONEncoder` was about 3 % of the server's CPU in a
/// biometric sign-in (docs/performance.md, item 13); the answer is the same JSON (tests compare both).
protocol JSONWritable: Encodable {
    func writeJSON(to writer: inout JSONWriter)
}

/// Writes JSON text into a byte buffer: objects, arrays, strings (escaped as RFC 8259 §7 requires), integers,
/// booleans and null. A comma goes before every member or element but the first of its object or array.
struct JSONWriter {
    private(set) var buffer: ByteBuffer

    init(capacity: Int = 512) {
        self.buffer = ByteBufferAllocator().buffer(capacity: capacity)
    }

    /// `{`, the members `body` writes, `}`.
    mutating func object(_ body: (inout JSONWriter) -> Void) {
        self.buffer.writeInteger(UInt8(ascii: "{"))
        body(&self)
        self.buffer.writeInteger(UInt8(ascii: "}"))
    }

    /// `[`, the elements, `]`.
    mutating func array<Element>(_ elements: some Sequence<Element>, _ write: (inout JSONWriter, Element) -> Void) {
        self.buffer.writeInteger(UInt8(ascii: "["))
        for element in elements {
            self.separate()
            write(&self, element)
        }
        self.buffer.writeInteger(UInt8(ascii: "]"))
    }

    /// `"name":` (a member's name is a literal of ours: nothing in it to escape).
    mutating func key(_ name: StaticString) {
        self.separate()
        self.buffer.writeInteger(UInt8(ascii: "\""))
        name.withUTF8Buffer { _ = self.buffer.writeBytes($0) }
        self.buffer.writeInteger(UInt8(ascii: "\""))
        self.buffer.writeInteger(UInt8(ascii: ":"))
    }

    mutating func member(_ name: StaticString, _ value: String) {
        self.key(name)
        self.string(value)
    }

    /// `null` when `value` is nil (the member is present either way, as `JSONEncoder.encode(_:forKey:)` writes it).
    mutating func member(_ name: StaticString, _ value: String?) {
        self.key(name)
        if let value { self.string(value) } else { self.null() }
    }

    mutating func member(_ name: StaticString, _ value: Int) {
        self.key(name)
        self.buffer.writeString(String(value))
    }

    mutating func member(_ name: StaticString, _ value: Bool) {
        self.key(name)
        self.buffer.writeStaticString(value ? "true" : "false")
    }

    mutating func member(_ name: StaticString, _ value: [String]) {
        self.key(name)
        self.array(value) { $0.string($1) }
    }

    mutating func member(_ name: StaticString, _ value: some JSONWritable) {
        self.key(name)
        value.writeJSON(to: &self)
    }

    mutating func null() {
        self.buffer.writeStaticString("null")
    }

    /// A JSON string: `"` and `\` escaped, control characters as `\n`, `\t`... or `\u00XX`; everything else (all of
    /// Unicode) as its UTF-8.
    mutating func string(_ value: String) {
        self.buffer.writeInteger(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                self.buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start..<index]))
                self.escape(byte)
                start = index + 1
            }
            self.buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start...]))
        }
        self.buffer.writeInteger(UInt8(ascii: "\""))
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): self.buffer.writeStaticString("\\\"")
        case UInt8(ascii: "\\"): self.buffer.writeStaticString("\\\\")
        case 0x08: self.buffer.writeStaticString("\\b")
        case 0x0C: self.buffer.writeStaticString("\\f")
        case 0x0A: self.buffer.writeStaticString("\\n")
        case 0x0D: self.buffer.writeStaticString("\\r")
        case 0x09: self.buffer.writeStaticString("\\t")
        default:
            // The other control characters (below 0x20): `\u00` and two lowercase hex digits.
            func hex(_ nibble: UInt8) -> UInt8 { nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10 }
            self.buffer.writeStaticString("\\u00")
            self.buffer.writeInteger(hex(byte >> 4))
            self.buffer.writeInteger(hex(byte & 0x0F))
        }
    }

    /// A comma unless this is the first member or element of its object or array (or the value of a member).
    private mutating func separate() {
        guard let last = self.buffer.getInteger(at: self.buffer.writerIndex - 1, as: UInt8.self) else { return }
        if last != UInt8(ascii: "{") && last != UInt8(ascii: "[") && last != UInt8(ascii: ":") {
            self.buffer.writeInteger(UInt8(ascii: ","))
        }
    }
}

extension UserResource: JSONWritable {
    func writeJSON(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("id", self.id)
            object.member("email", self.email)
            object.member("displayName", self.displayName)
            object.member("createdAt", self.createdAt)
        }
    }
}

extension SessionResource: JSONWritable {
    func writeJSON(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("token", self.token)
            object.member("expiresAt", self.expiresAt)
            object.member("idleExpiresAt", self.idleExpiresAt)
            object.member("authenticatedAt", self.authenticatedAt)
            object.member("methods", self.methods)
        }
    }
}

extension SignedIn: JSONWritable {
    func writeJSON(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("user", self.user)
            object.member("session", self.session)
        }
    }
}

extension ChallengeResponse: JSONWritable {
    func writeJSON(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("registrationId", self.registrationId)
            object.member("challenge", self.challenge)
            object.member("expiresAt", self.expiresAt)
        }
    }
}

extension CreationOptionsJSON.Descriptor: JSONWritable {
    func writeJSON(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("type", self.type)
            object.member("id", self.id)
        }
    }
}

extension RequestOptionsJSON: JSONWritable {
    func writeJSON(to writer: inout JSONWriter) {
        writer.object { object in
            object.member("challenge", self.challenge)
            object.member("timeout", self.timeout)
            object.member("rpId", self.rpId)
            object.key("allowCredentials")
            object.array(self.allowCredentials) { $1.writeJSON(to: &$0) }
            object.member("userVerification", self.userVerification)
            // Absent when none, as the synthesized `Encodable` leaves it out.
            if let hints = self.hints { object.member("hints", hints) }
        }
    }
}
