/// What a phone signs to approve or decline a sign-in elsewhere (issue #34): the JCS (RFC 8785) serialisation of the
/// request's payload with the decision added.
///
/// A browser's request (`kind` `sign_in`):
///
///     {"browser": {"address", "userAgent"}, "choice", "client", "decision", "expiresAt", "kind": "sign_in",
///      "requestId", "rpId", "userId", "version": 1}
///
/// A client backend's (OpenID CIBA, `kind` `backchannel`) has `bindingMessage` (a string or null) instead of
/// `browser`. `decision` is `approve` or `decline`; `choice` is the number the user picked on a `sign_in` approval and
/// null otherwise; a decline adds `reason` (`not_me` or `cancel`). The payload names the request and the account, so a
/// signature for one never approves another.
public enum SignInApproval {
    public static let version = 1

    /// Why a user declined.
    public enum DeclineReason: String, Sendable, Hashable, CaseIterable {
        /// The user did not ask to sign in: someone else has the password or is trying their luck.
        case notMe = "not_me"
        /// The user changed their mind.
        case cancel
    }

    /// The user's answer.
    public enum Decision: Sendable, Hashable {
        /// Approve; `choice` is the number picked (nil for a backchannel request, which has no number).
        case approve(choice: Int?)
        case decline(DeclineReason)
    }

    /// Who is asking: a browser (number matching) or a client's backend (a binding message instead).
    public enum Kind: String, Sendable, Hashable {
        case signIn = "sign_in"
        case backchannel
    }

    /// The payload as the server shows it to the phone: everything that is signed except the decision.
    public struct Payload: Sendable, Hashable, Codable {
        public struct Browser: Sendable, Hashable, Codable {
            /// The browser's address as the server determined it.
            public var address: String
            /// The browser's `User-Agent`, cut to 200 characters.
            public var userAgent: String

            public init(address: String, userAgent: String) {
                self.address = address
                self.userAgent = userAgent
            }
        }

        public var requestId: String
        public var kind: String
        public var rpId: String
        public var userId: String
        /// The OpenID client's name, or the product's name for the server's own pages.
        public var client: String
        /// RFC 3339 UTC with milliseconds.
        public var expiresAt: String
        /// For `sign_in`.
        public var browser: Browser?
        /// For `backchannel`: what the client's backend asked the user to check (nil: none).
        public var bindingMessage: String?
        public var version: Int

        public init(
            requestId: String,
            kind: Kind,
            rpId: String,
            userId: String,
            client: String,
            expiresAt: String,
            browser: Browser? = nil,
            bindingMessage: String? = nil
        ) {
            self.requestId = requestId
            self.kind = kind.rawValue
            self.rpId = rpId
            self.userId = userId
            self.client = client
            self.expiresAt = expiresAt
            self.browser = browser
            self.bindingMessage = bindingMessage
            self.version = SignInApproval.version
        }

        enum CodingKeys: String, CodingKey { case requestId, kind, rpId, userId, client, expiresAt, browser, bindingMessage, version }

        public func encode(to encoder: any Encoder) throws {
            // The same members as ``json``: a backchannel payload always has `bindingMessage` (null when none).
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(self.requestId, forKey: .requestId)
            try container.encode(self.kind, forKey: .kind)
            try container.encode(self.rpId, forKey: .rpId)
            try container.encode(self.userId, forKey: .userId)
            try container.encode(self.client, forKey: .client)
            try container.encode(self.expiresAt, forKey: .expiresAt)
            if self.kind == Kind.backchannel.rawValue {
                try container.encode(self.bindingMessage, forKey: .bindingMessage)
            } else {
                try container.encodeIfPresent(self.browser, forKey: .browser)
            }
            try container.encode(self.version, forKey: .version)
        }

        /// The payload's members as a JSON value.
        public var json: JSONValue {
            var members: [String: JSONValue] = [
                "client": .string(self.client),
                "expiresAt": .string(self.expiresAt),
                "kind": .string(self.kind),
                "requestId": .string(self.requestId),
                "rpId": .string(self.rpId),
                "userId": .string(self.userId),
                "version": .number(Double(self.version)),
            ]
            if self.kind == Kind.backchannel.rawValue {
                members["bindingMessage"] = self.bindingMessage.map(JSONValue.string) ?? .null
            } else if let browser = self.browser {
                members["browser"] = .object(["address": .string(browser.address), "userAgent": .string(browser.userAgent)])
            }
            return .object(members)
        }

        /// The exact bytes a device signs for `decision`.
        public func signedBytes(_ decision: Decision) -> [UInt8] {
            guard case .object(var members) = self.json else { preconditionFailure("a payload is an object") }
            switch decision {
            case .approve(let choice):
                members["decision"] = .string("approve")
                members["choice"] = choice.map { .number(Double($0)) } ?? .null
            case .decline(let reason):
                members["decision"] = .string("decline")
                members["choice"] = .null
                members["reason"] = .string(reason.rawValue)
            }
            return CanonicalJSON.serialize(.object(members))
        }
    }
}
