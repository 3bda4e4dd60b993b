import NIOCore
import TouchstoneConfirmation

/// A response body that writes its own JSON, without `JSONEncoder`: the sign-in's answers (``SignedIn``,
/// ``ChallengeResponse``, the passkey request options). `JSONEncoder` was about 3 % of the server's CPU in a
/// biometric sign-in (docs/performance.md, item 13); the answer is the same JSON (tests compare both).
protocol JSONWritable: Encodable {
    func writeJSON(to writer: inout JSONWriter)
}

/// Writes JSON text: objects, arrays, strings (escaped by ``CanonicalJSON/writeString(_:to:)``, as `JSON.stringify`
/// escapes them), integers, booleans and null. A comma goes before every member or element but the first of its
/// object or array.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 512) {
        self.bytes.reserveCapacity(capacity)
    }

    /// The text, for a response body.
    var buffer: ByteBuffer { ByteBuffer(bytes: self.bytes) }

    /// `{`, the members `body` writes, `}`.
    mutating func object(_ body: (inout JSONWriter) -> Void) {
        self.bytes.append(UInt8(ascii: "{"))
        body(&self)
        self.bytes.append(UInt8(ascii: "}"))
    }

    /// `[`, the elements, `]`.
    mutating func array<Element>(_ elements: some Sequence<Element>, _ write: (inout JSONWriter, Element) -> Void) {
        self.bytes.append(UInt8(ascii: "["))
        for element in elements {
            self.separate()
            write(&self, element)
        }
        self.bytes.append(UInt8(ascii: "]"))
    }

    /// `"name":` (a member's name is a literal of ours: nothing in it to escape).
    mutating func key(_ name: StaticString) {
        self.separate()
        self.bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { self.bytes.append(contentsOf: $0) }
        self.bytes.append(UInt8(ascii: "\""))
        self.bytes.append(UInt8(ascii: ":"))
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
        self.bytes.append(contentsOf: String(value).utf8)
    }

    mutating func member(_ name: StaticString, _ value: Bool) {
        self.key(name)
        self.bytes.append(contentsOf: (value ? "true" : "false").utf8)
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
        self.bytes.append(contentsOf: "null".utf8)
    }

    mutating func string(_ value: String) {
        CanonicalJSON.writeString(value, to: &self.bytes)
    }

    /// A comma unless this is the first member or element of its object or array (or the value of a member).
    private mutating func separate() {
        guard let last = self.bytes.last else { return }
        if last != UInt8(ascii: "{") && last != UInt8(ascii: "[") && last != UInt8(ascii: ":") {
            self.bytes.append(UInt8(ascii: ","))
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
            object.member("emailVerified", self.emailVerified)
            object.member("hasPassword", self.hasPassword)
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
