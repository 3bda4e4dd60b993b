public import Foundation
import TouchstoneCrypto

// Sign-in approved on the phone (issue #34): the browser's side and the phone's side of `/v1/sign-in-requests`.
extension TouchstoneClient {
    // MARK: The browser (or a desktop app)

    /// `POST /v1/sign-in-requests`: asks the account's phone to approve a sign-in here. Show ``StartedSignInRequest/number``
    /// large and ``StartedSignInRequest/qr`` as a QR code, then poll ``signInRequestStatus(id:pollToken:wait:)``.
    public func startSignInRequest(email: String? = nil, clientId: String? = nil) async throws -> StartedSignInRequest {
        struct Body: Encodable {
            var email: String?
            var clientId: String?
        }
        let response = try await self.exchange(
            "POST", "/v1/sign-in-requests", authorization: nil, raw: try JSONEncoder().encode(Body(email: email, clientId: clientId)))
        return try self.decode(StartedSignInRequest.self, response, path: "/v1/sign-in-requests")
    }

    /// `GET /v1/sign-in-requests/{id}`, waiting up to `wait` seconds (0–30) for the phone's decision.
    public func signInRequestStatus(id: String, pollToken: String, wait: Int = 0) async throws -> SignInRequestStatus {
        struct Body: Decodable {
            var status: String
            var user: TouchstoneUser?
            var session: TouchstoneSessionInfo?
        }
        let path = "/v1/sign-in-requests/\(Self.pathComponent(id))?wait=\(max(0, min(wait, 30)))"
        let response = try await self.exchange("GET", path, authorization: "Bearer \(pollToken)", raw: nil)
        let body = try self.decode(Body.self, response, path: "/v1/sign-in-requests/{id}")
        let session = body.user.flatMap { user in body.session.map { TouchstoneSession(user: user, session: $0) } }
        return SignInRequestStatus(status: body.status, session: session)
    }

    // MARK: The phone

    /// `POST /v1/biometrics/registrations/{id}/device-credential` (a session of the registration's owner): a new
    /// device credential; the previous one stops working.
    public func issueDeviceCredential(token: String, registrationId: String) async throws -> String {
        struct Body: Decodable { var deviceCredential: String }
        let path = "/v1/biometrics/registrations/\(Self.pathComponent(registrationId))/device-credential"
        let response = try await self.exchange("POST", path, token: token, raw: nil)
        return try self.decode(Body.self, response, path: path).deviceCredential
    }

    /// `GET /v1/sign-in-requests/pending` with the device credential: the requests waiting for the account's phones.
    public func pendingSignInRequests(registrationId: String, deviceCredential: String) async throws -> [SignInRequest] {
        struct Body: Decodable { var requests: [SignInRequest] }
        let response = try await self.exchange(
            "GET", "/v1/sign-in-requests/pending", authorization: Self.deviceAuthorization(registrationId, deviceCredential), raw: nil)
        return try self.decode(Body.self, response, path: "/v1/sign-in-requests/pending").requests
    }

    /// `GET /v1/sign-in-requests/{id}?secret=` with the device credential: a request whose QR code the phone scanned
    /// (a request made without an address becomes this account's).
    public func scannedSignInRequest(_ scanned: ScannedSignIn, registrationId: String, deviceCredential: String) async throws -> SignInRequest {
        var query = URLComponents()
        query.queryItems = [URLQueryItem(name: "secret", value: scanned.secret)]
        let path = "/v1/sign-in-requests/\(Self.pathComponent(scanned.requestId))?\(query.percentEncodedQuery ?? "")"
        let response = try await self.exchange("GET", path, authorization: Self.deviceAuthorization(registrationId, deviceCredential), raw: nil)
        return try self.decode(SignInRequest.self, response, path: "/v1/sign-in-requests/{id}")
    }

    /// `POST /v1/sign-in-requests/{id}/approve` or `/decline` with the device key's signature over the payload and
    /// `decision`.
    public func decideSignInRequest(id: String, registrationId: String, decision: SignInDecision, signature: [UInt8]) async throws {
        struct Approve: Encodable {
            var registrationId: String
            var choice: Int?
            var signature: String

            func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(self.registrationId, forKey: .registrationId)
                try container.encode(self.choice, forKey: .choice)
                try container.encode(self.signature, forKey: .signature)
            }

            enum CodingKeys: CodingKey { case registrationId, choice, signature }
        }
        struct Decline: Encodable {
            var registrationId: String
            var reason: String
            var signature: String
        }
        let encoded = Base64.urlEncode(signature)
        let (path, body): (String, Data)
        switch decision {
        case .approve(let choice):
            path = "/v1/sign-in-requests/\(Self.pathComponent(id))/approve"
            body = try JSONEncoder().encode(Approve(registrationId: registrationId, choice: choice, signature: encoded))
        case .decline(let reason):
            path = "/v1/sign-in-requests/\(Self.pathComponent(id))/decline"
            body = try JSONEncoder().encode(Decline(registrationId: registrationId, reason: reason.rawValue, signature: encoded))
        }
        _ = try await self.exchange("POST", path, authorization: nil, raw: body)
    }

    /// `PUT /v1/biometrics/registrations/{id}/push-token`: where the server sends Apple pushes for new requests.
    public func registerPushToken(_ token: [UInt8], registrationId: String, deviceCredential: String) async throws {
        let path = "/v1/biometrics/registrations/\(Self.pathComponent(registrationId))/push-token"
        let body = try JSONEncoder().encode(["platform": "apns", "token": Hex.encode(token)])
        _ = try await self.exchange("PUT", path, authorization: Self.deviceAuthorization(registrationId, deviceCredential), raw: body)
    }

    static func deviceAuthorization(_ registrationId: String, _ credential: String) -> String {
        "Device \(registrationId):\(credential)"
    }
}
