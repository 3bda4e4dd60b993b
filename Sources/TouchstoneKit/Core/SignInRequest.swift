public import Foundation

/// A request to sign in somewhere else — a browser on a computer, or an app's backend through OpenID CIBA — waiting
/// for this phone's approval (`GET /v1/sign-in-requests/pending`).
///
/// Show ``client``, the browser (``SignInRequestPayload/browser``) or the binding message, and the three ``numbers``;
/// the user picks the one the computer shows.
public struct SignInRequest: Sendable, Hashable, Codable {
    public var requestId: String
    /// Who asks: the OpenID client's name, or the product's.
    public var client: String
    /// Three numbers, the one the computer shows among them; empty for a backchannel request (check the binding
    /// message instead).
    public var numbers: [Int]
    /// What is signed with the decision.
    public var payload: SignInRequestPayload

    /// Whether the user must pick a number (a browser's request) or check a binding message (a backchannel request).
    public var needsNumber: Bool { self.payload.kind == SignInRequestPayload.signInKind }
}

/// The payload of a ``SignInRequest``: the request, the account, who asks and until when. The phone signs it with its
/// decision as RFC 8785 canonical JSON (``signedBytes(_:)``), so the signature names the request and the account.
public struct SignInRequestPayload: Sendable, Hashable, Codable {
    public struct Browser: Sendable, Hashable, Codable {
        /// The browser's IP address as the server saw it.
        public var address: String
        /// The browser's `User-Agent`.
        public var userAgent: String
    }

    static let signInKind = "sign_in"
    static let backchannelKind = "backchannel"

    public var requestId: String
    /// `sign_in` (a browser) or `backchannel` (CIBA).
    public var kind: String
    public var rpId: String
    public var userId: String
    public var client: String
    /// RFC 3339.
    public var expiresAt: String
    public var browser: Browser?
    public var bindingMessage: String?
    public var version: Int

    /// The exact bytes this phone signs for `decision`.
    public func signedBytes(_ decision: SignInDecision) -> [UInt8] {
        var members: [(String, CanonicalValue)] = [
            ("client", .string(self.client)),
            ("expiresAt", .string(self.expiresAt)),
            ("kind", .string(self.kind)),
            ("requestId", .string(self.requestId)),
            ("rpId", .string(self.rpId)),
            ("userId", .string(self.userId)),
            ("version", .integer(self.version)),
        ]
        if self.kind == Self.backchannelKind {
            members.append(("bindingMessage", self.bindingMessage.map(CanonicalValue.string) ?? .null))
        } else if let browser = self.browser {
            members.append(("browser", .object([("address", .string(browser.address)), ("userAgent", .string(browser.userAgent))])))
        }
        switch decision {
        case .approve(let choice):
            members.append(("decision", .string("approve")))
            members.append(("choice", choice.map(CanonicalValue.integer) ?? .null))
        case .decline(let reason):
            members.append(("decision", .string("decline")))
            members.append(("choice", .null))
            members.append(("reason", .string(reason.rawValue)))
        }
        var output: [UInt8] = []
        CanonicalValue.object(members).write(to: &output)
        return output
    }
}

/// The user's answer to a ``SignInRequest``.
public enum SignInDecision: Sendable, Hashable {
    /// Approve; `choice` is the number picked (nil for a backchannel request).
    case approve(choice: Int?)
    case decline(SignInDeclineReason)
}

/// Why the user declined.
public enum SignInDeclineReason: String, Sendable, Hashable, CaseIterable {
    /// "It wasn't me": someone else is trying to sign in (the app's backend hears of it; the server may pause phone
    /// approvals for the account).
    case notMe = "not_me"
    case cancel
}

/// The JSON values a sign-in payload has, written as RFC 8785 writes them: members sorted by their keys' UTF-16 code
/// units, no white space, strings escaped as ECMAScript's `JSON.stringify` escapes them, integers in plain notation.
/// (The server checks with its general JCS serialiser; the SDK's tests compare the two.)
enum CanonicalValue {
    case string(String)
    case integer(Int)
    case null
    case object([(String, CanonicalValue)])

    func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .integer(let value): output.append(contentsOf: String(value).utf8)
        case .string(let text): Self.writeString(text, to: &output)
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            let sorted = members.sorted { Array($0.0.utf16).lexicographicallyPrecedes(Array($1.0.utf16)) }
            for (index, (key, value)) in sorted.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                Self.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    static func writeString(_ text: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: #"\\"#.utf8)
            case 0x08: output.append(contentsOf: #"\b"#.utf8)
            case 0x0C: output.append(contentsOf: #"\f"#.utf8)
            case 0x0A: output.append(contentsOf: #"\n"#.utf8)
            case 0x0D: output.append(contentsOf: #"\r"#.utf8)
            case 0x09: output.append(contentsOf: #"\t"#.utf8)
            case ..<0x20:
                let digits = Array("0123456789abcdef".utf8)
                output.append(contentsOf: #"\u00"#.utf8)
                output.append(digits[Int(byte >> 4)])
                output.append(digits[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}

/// What a browser gets when it asks to sign in with the phone (`POST /v1/sign-in-requests`).
public struct StartedSignInRequest: Sendable, Hashable, Decodable {
    public var requestId: String
    /// The secret the browser polls with; keep it in memory only.
    public var pollToken: String
    /// The number to show, large.
    public var number: Int
    public var expiresAt: String
    /// `touchstone://sign-in?request=...&secret=...&server=...`, to show as a QR code.
    public var qr: String
    /// `qr` as an SVG QR code (nil from servers that do not send one).
    public var qrSvg: String?
}

/// The browser's view of its request (`GET /v1/sign-in-requests/{id}`).
public struct SignInRequestStatus: Sendable, Hashable {
    /// `pending`, `approved`, `declined` or `expired`.
    public var status: String
    /// The session the approval made, on the first answer that sees the approval only.
    public var session: TouchstoneSession?
}

/// What a scanned sign-in QR code says.
public struct ScannedSignIn: Sendable, Hashable {
    public var requestId: String
    public var secret: String
    /// The server the code is for (its issuer).
    public var server: String

    /// Reads `touchstone://sign-in?request=&secret=&server=`; nil for anything else.
    public init?(url: URL) {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.scheme == "touchstone",
            components.host == "sign-in", let items = components.queryItems,
            let request = items.first(where: { $0.name == "request" })?.value, !request.isEmpty, request.utf8.count <= 64,
            let secret = items.first(where: { $0.name == "secret" })?.value, !secret.isEmpty, secret.utf8.count <= 128,
            let server = items.first(where: { $0.name == "server" })?.value, !server.isEmpty
        else {
            return nil
        }
        self.requestId = request
        self.secret = secret
        self.server = server
    }
}
