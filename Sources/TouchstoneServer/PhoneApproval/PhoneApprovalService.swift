import Foundation
import Logging
import ServiceLifecycle
import TouchstoneConfirmation
import TouchstoneCrypto
import TouchstoneOpenID
import TouchstoneStore
import TouchstoneWebhooks

/// Sign-ins approved on a phone (issue #34): a browser (or a client's backend, through CIBA) asks; the account's
/// phones read the request with their device credential; the user picks the number the computer shows and signs the
/// request's payload and their decision with the device key; the browser's poll turns the approval into one session.
struct PhoneApprovalService: Sendable {
    let store: any TouchstoneStore
    let secrets: Secrets
    let now: @Sendable () -> Date
    let audit: AuditLog
    let policy: PolicyProvider
    let sessions: SessionManager
    let settings: PhoneApprovalSettings
    let rpId: String
    /// What the phone shows as the requester of the server's own pages.
    let productName: String
    let issuer: String
    let signal: SignInRequestSignal
    /// Tells the account's phones (Apple push), after the request is stored; nil: no push configured.
    let push: (any PushNotifier)?
    /// Where the push is recorded with the request, and done from (issue #44 item 1).
    let deferred: DeferredWork
    let logger: Logger

    static let pushWork = "sign_in_push"

    // MARK: Creating

    struct Created: Sendable {
        var record: SignInRequestRecord
        var pollToken: String
        /// `touchstone://sign-in?request=&secret=&server=`, for a phone that scans it.
        var qr: String?
    }

    /// A browser's request (`POST /v1/sign-in-requests`): the same answer whether or not `email` has an account; one
    /// without an account (or whose phone approvals are paused) is never shown to a phone.
    func create(email: String?, client: OAuthClientRecord?, browser: ClientInfo) async throws -> Created {
        let now = self.now()
        // The same reads for every address, so the answer's timing says little about the account.
        let user = try await email.asyncMap { try await self.store.user(email: $0) } ?? nil
        let paused = try await self.store.phoneApprovalsPausedUntil(userId: user?.id ?? "", at: now) != nil
        let registrations = try await self.store.registrations(userId: user?.id ?? "").filter { $0.status == .active }
        let userId = paused ? nil : user?.id
        let number = self.randomNumber()
        let pollToken = self.secrets.newToken()
        let secret = self.secrets.newToken()
        let record = SignInRequestRecord(
            id: self.secrets.newIdentifier(),
            kind: .signIn,
            email: email,
            userId: userId,
            clientId: client?.id,
            clientName: client?.name ?? self.productName,
            pollTokenHash: Secrets.hash(token: pollToken),
            secretHash: Secrets.hash(token: secret),
            number: number,
            choices: self.choices(around: number),
            browserAddress: browser.address,
            browserUserAgent: browser.userAgent.map { String($0.prefix(200)) },
            createdAt: now,
            expiresAt: now.addingTimeInterval(self.settings.requestTTL)
        )
        try await self.insert(record, registrations: userId == nil ? [] : registrations)
        let qr = "touchstone://sign-in?request=\(record.id)&secret=\(secret)&server=\(FormParameters.encode(self.issuer))"
        return Created(record: record, pollToken: pollToken, qr: qr)
    }

    /// A client backend's request (CIBA, `POST /oauth2/bc-authorize`) for a known user.
    func createBackchannel(
        client: OAuthClientRecord,
        user: UserRecord,
        scope: String,
        bindingMessage: String?,
        lifetime: TimeInterval
    ) async throws -> Created {
        let now = self.now()
        if try await self.store.phoneApprovalsPausedUntil(userId: user.id, at: now) != nil { throw APIError.phoneApprovalPaused }
        let authReqId = self.secrets.newToken()
        let record = SignInRequestRecord(
            id: self.secrets.newIdentifier(),
            kind: .backchannel,
            email: nil,
            userId: user.id,
            clientId: client.id,
            clientName: client.name,
            bindingMessage: bindingMessage,
            scope: scope,
            pollTokenHash: Secrets.hash(token: authReqId),
            secretHash: nil,
            number: nil,
            choices: [],
            browserAddress: nil,
            browserUserAgent: nil,
            createdAt: now,
            expiresAt: now.addingTimeInterval(lifetime)
        )
        let registrations = try await self.store.registrations(userId: user.id).filter { $0.status == .active }
        try await self.insert(record, registrations: registrations)
        return Created(record: record, pollToken: authReqId)
    }

    /// Stores the request with its `sign_in_request.created` event (for an account), then tells the phones.
    private func insert(_ record: SignInRequestRecord, registrations: [RegistrationRecord]) async throws {
        var events: [AuditEventRecord] = []
        if let userId = record.userId {
            events.append(
                self.audit.event(
                    .signInRequestCreated, .info, userId: userId,
                    reason: "request \(record.id) kind \(record.kind.rawValue)" + (record.clientId.map { " client \($0)" } ?? ""),
                    webhookData: [
                        "requestId": .string(record.id),
                        "kind": .string(record.kind.rawValue),
                        "client": .string(record.clientName),
                        "registrationIds": .strings(registrations.map(\.id)),
                        "expiresAt": .string(record.expiresAt.rfc3339),
                    ]
                )
            )
        }
        let maximumPending = self.settings.maximumPendingPerAddress
        let created = events
        let inserted: Bool
        if self.push != nil && record.userId != nil {
            // The push is promised with the 201: recorded in the request's transaction, sent from the record.
            inserted = try await self.store.unitOfWork { tx in
                guard try await tx.insertSignInRequest(record, maximumPending: maximumPending, events: created, at: record.createdAt) else { return false }
                try await self.deferred.record(Self.pushWork, subject: record.id, in: tx)
                return true
            }
            if inserted { self.deferred.committed() }
        } else {
            inserted = try await self.store.insertSignInRequest(record, maximumPending: maximumPending, events: events, at: record.createdAt)
        }
        guard inserted else { throw APIError.tooManyPendingRequests }
        self.audit.committed(events)
    }

    /// Sends a recorded push: to the phones of a request still pending, then the record goes. A request decided or
    /// expired meanwhile needs no push. A failure (Apple unreachable) leaves the record to be tried again.
    func deliverPush(_ lease: DeferredLease) async throws {
        if let push = self.push, let request = try await self.store.signInRequest(id: lease.work.subject), let userId = request.userId,
            request.status == .pending, request.expiresAt > self.now()
        {
            try await push.announce(request, userId: userId)
        }
        try await lease.finish(in: self.store)
    }

    // MARK: The phone

    /// The registration a device credential (`Authorization: Device <registrationId>:<credential>`) belongs to.
    ///
    /// - Throws: 401 `unauthenticated` without the header, 401 `invalid_device_credential` for an unknown or revoked
    ///   one, 403 `registration_locked` for a locked registration.
    func authenticateDevice(_ header: String?) async throws -> RegistrationRecord {
        guard let header, header.count > 7, header.prefix(7).lowercased() == "device " else {
            throw APIError.unauthenticated("a device credential is required: Authorization: Device <registrationId>:<deviceCredential>")
        }
        let value = header.dropFirst(7).trimmingASCIISpaces
        guard let colon = value.lastIndex(of: ":") else { throw APIError.invalidDeviceCredential }
        let registrationId = String(value[..<colon]), credential = String(value[value.index(after: colon)...])
        guard !registrationId.isEmpty, registrationId.utf8.count <= 64, !credential.isEmpty, credential.utf8.count <= 128 else {
            throw APIError.invalidDeviceCredential
        }
        guard let channel = try await self.store.deviceChannel(registrationId: registrationId),
            ConstantTime.equal(Array(Secrets.hash(token: credential).utf8), Array(channel.credentialHash.utf8)),
            let registration = try await self.store.registration(id: registrationId)
        else {
            throw APIError.invalidDeviceCredential
        }
        switch registration.status {
        case .active: return registration
        case .locked: throw APIError.registrationLocked
        default: throw APIError.invalidDeviceCredential
        }
    }

    /// A request as a phone reads it.
    struct PhoneView: Sendable {
        var record: SignInRequestRecord
        var payload: SignInApproval.Payload
    }

    /// The pending requests of the registration's account (none while its phone approvals are paused).
    func pending(for registration: RegistrationRecord) async throws -> [PhoneView] {
        let now = self.now()
        if try await self.store.phoneApprovalsPausedUntil(userId: registration.userId, at: now) != nil { return [] }
        return try await self.store.pendingSignInRequests(userId: registration.userId, at: now).map { record in
            PhoneView(record: record, payload: self.payload(record, userId: registration.userId))
        }
    }

    /// A request a phone scanned (its QR code's secret): a request made without an address is bound to the scanning
    /// registration's account here, by the first phone that reads it.
    func scanned(_ id: String, secret: String, by registration: RegistrationRecord) async throws -> PhoneView {
        guard var record = try await self.store.signInRequest(id: id), record.kind == .signIn, let secretHash = record.secretHash,
            ConstantTime.equal(Array(Secrets.hash(token: secret).utf8), Array(secretHash.utf8))
        else {
            throw APIError.signInRequestNotFound
        }
        try self.requirePending(record)
        if record.userId == nil {
            // A request for an address without an account stays unseen; one without an address is bound now.
            guard record.email == nil else { throw APIError.signInRequestNotFound }
            _ = try await self.store.bindSignInRequest(id: id, userId: registration.userId, at: self.now())
            record = try await self.reload(id)
        }
        guard record.userId == registration.userId else { throw APIError.signInRequestNotFound }
        if try await self.store.phoneApprovalsPausedUntil(userId: registration.userId, at: self.now()) != nil {
            throw APIError.phoneApprovalPaused
        }
        return PhoneView(record: record, payload: self.payload(record, userId: registration.userId))
    }

    /// Gives a registration a device credential (shown once; an earlier one stops working).
    func issueDeviceCredential(registrationId: String) async throws -> String {
        let credential = self.secrets.newToken()
        try await self.store.setDeviceCredential(registrationId: registrationId, credentialHash: Secrets.hash(token: credential), at: self.now())
        return credential
    }

    // MARK: Deciding

    /// Approves or declines with the device key's signature over the payload and the decision.
    ///
    /// The signature is checked before anything else about the decision, so that only the account's phone can decline
    /// (or pick a wrong number for) a request. A wrong number declines the request and throws 409 `wrong_number`.
    func decide(_ id: String, registrationId: String, decision: SignInApproval.Decision, signature: [UInt8]) async throws -> SignInRequestRecord {
        guard let record = try await self.store.signInRequest(id: id), let userId = record.userId else { throw APIError.signInRequestNotFound }
        try self.requirePending(record)
        guard let registration = try await self.store.registration(id: registrationId), registration.status != .pending else {
            throw APIError.registrationNotFound
        }
        guard registration.userId == userId else {
            await self.recordFailure(record, reason: "registration_not_allowed", registrationId: registrationId, userId: registration.userId)
            throw APIError.registrationNotAllowed
        }
        guard registration.status != .locked else {
            await self.recordFailure(record, reason: "registration_locked", registrationId: registrationId, userId: userId)
            throw APIError.registrationLocked
        }
        guard registration.status == .active else {
            await self.recordFailure(record, reason: "registration_revoked", registrationId: registrationId, userId: userId)
            throw APIError.registrationRevoked
        }
        if case .approve(let choice) = decision {
            switch record.kind {
            case .signIn where choice == nil: throw APIError.invalidRequest("field 'choice' must be the number picked (10 to 99)")
            case .backchannel where choice != nil: throw APIError.invalidRequest("field 'choice' must be null: a backchannel request has no number")
            default: break
            }
            if try await self.store.phoneApprovalsPausedUntil(userId: userId, at: self.now()) != nil {
                await self.recordFailure(record, reason: "phone_approval_paused", registrationId: registrationId, userId: userId)
                throw APIError.phoneApprovalPaused
            }
        }
        guard let algorithm = SignatureAlgorithm(rawValue: registration.algorithm),
            let key = try? DevicePublicKey(bytes: registration.publicKey, algorithm: algorithm)
        else {
            throw APIError.internalError
        }
        let message = self.payload(record, userId: userId).signedBytes(decision)
        guard key.isValidSignature(signature, for: message) else {
            // Nothing is decided; the failure counts toward the registration's lockout.
            try await self.audit.recordLockout(registration: registration, threshold: Int64(self.policy.current.lockoutThreshold), at: self.now())
            await self.recordFailure(record, reason: "invalid_signature", registrationId: registrationId, userId: userId)
            throw APIError.invalidDecisionSignature
        }
        let status: SignInRequestRecord.Status
        let reason: String?
        let type: AuditEventType
        switch decision {
        case .approve(let choice) where record.kind == .signIn && choice != record.number:
            (status, reason, type) = (.declined, "wrong_number", .signInRequestWrongNumber)
        case .approve:
            (status, reason, type) = (.approved, nil, .signInRequestApproved)
        case .decline(.notMe):
            (status, reason, type) = (.declined, "not_me", .signInRequestNotMe)
        case .decline(.cancel):
            (status, reason, type) = (.declined, "cancel", .signInRequestDeclined)
        }
        let event = self.audit.event(
            type, type == .signInRequestApproved ? .success : .info, userId: userId, registrationId: registrationId,
            reason: "request \(id)" + (reason.map { " \($0)" } ?? ""),
            webhookData: ["requestId": .string(id)].merging(reason.map { ["reason": .string($0)] } ?? [:]) { a, _ in a }
        )
        let decisionRecord = SignInRequestDecision(status: status, registrationId: registrationId, reason: reason, signature: Base64.urlEncode(signature))
        guard try await self.store.decideSignInRequest(id: id, decision: decisionRecord, events: [event], at: self.now()) else {
            throw try await self.whyNotPending(id)
        }
        self.audit.committed([event])
        await self.signal.notify(id)
        if type == .signInRequestNotMe && self.settings.lockOnNotMe {
            try await self.store.pausePhoneApprovals(userId: userId, until: self.now().addingTimeInterval(self.settings.notMePause))
        }
        if type == .signInRequestWrongNumber { throw APIError.wrongNumber }
        return try await self.reload(id)
    }

    // MARK: The browser

    /// What the browser's poll answers.
    struct PollAnswer: Sendable {
        var status: String
        /// The session made for an approval, on the first poll that sees it only.
        var signedIn: (user: UserRecord, token: String, session: SessionRecord)?
    }

    /// `GET /v1/sign-in-requests/{id}` with the poll token: the request's status, waiting up to `wait` seconds for a
    /// change; the first answer that sees an approval carries the one session it makes.
    func poll(_ id: String, pollToken: String, wait: Int) async throws -> PollAnswer {
        guard var record = try await self.store.signInRequest(id: id), record.kind == .signIn,
            ConstantTime.equal(Array(Secrets.hash(token: pollToken).utf8), Array(record.pollTokenHash.utf8))
        else {
            throw APIError.signInRequestNotFound
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .seconds(wait))
        // A decision on this instance wakes the wait; one on another instance is read within a second. A server
        // shutting down answers at once (the browser polls again, another instance answers).
        while self.status(of: record) == "pending", clock.now < deadline, !Task.isShuttingDownGracefully {
            await self.signal.wait(id, for: min(.seconds(1), clock.now.duration(to: deadline)))
            try Task.checkCancellation()
            record = try await self.reload(id)
        }
        let status = self.status(of: record)
        guard status == "approved", record.redeemedAt == nil, let userId = record.userId,
            self.now() < record.expiresAt.addingTimeInterval(self.settings.redemptionGrace)
        else {
            return PollAnswer(status: status)
        }
        // Everything the answer needs is read before the redemption: once it commits, nothing may fail before the
        // answer, or the one session of the approval would be made and never handed out (the chaos test found a
        // database outage doing that between the commit and a later read of the user).
        guard let user = try await self.store.user(id: userId) else { return PollAnswer(status: status) }
        let (token, session) = self.sessions.make(forUserId: userId, method: .phoneApproval, registrationId: record.registrationId)
        let event = self.audit.event(.phoneApprovalLogin, userId: userId, registrationId: record.registrationId, reason: "request \(id)")
        let issued = try await self.store.unitOfWork { tx -> Bool in
            guard try await tx.redeemSignInRequest(id: id, at: self.now()) else { return false }
            try await tx.insertSession(session)
            try await tx.insertAuditEvent(event)
            return true
        }
        guard issued else { return PollAnswer(status: status) }
        self.audit.committed([event])
        return PollAnswer(status: status, signedIn: (user, token, session))
    }

    // MARK: Helpers

    /// `pending`, `approved`, `declined`, or `expired` (pending past its lifetime).
    func status(of record: SignInRequestRecord) -> String {
        switch record.status {
        case .pending: self.now() < record.expiresAt ? "pending" : "expired"
        case .approved: "approved"
        case .declined: "declined"
        }
    }

    /// 409 when decided, 410 when expired.
    func requirePending(_ record: SignInRequestRecord) throws {
        guard record.status == .pending else { throw APIError.signInRequestNotPending }
        guard self.now() < record.expiresAt else { throw APIError.signInRequestExpired }
    }

    /// What is signed, but the decision: it names the request and the account.
    func payload(_ record: SignInRequestRecord, userId: String) -> SignInApproval.Payload {
        SignInApproval.Payload(
            requestId: record.id,
            kind: record.kind == .signIn ? .signIn : .backchannel,
            rpId: self.rpId,
            userId: userId,
            client: record.clientName,
            expiresAt: record.expiresAt.rfc3339,
            browser: record.kind == .signIn
                ? .init(address: record.browserAddress ?? "unknown", userAgent: record.browserUserAgent ?? "") : nil,
            bindingMessage: record.bindingMessage
        )
    }

    func reload(_ id: String) async throws -> SignInRequestRecord {
        guard let record = try await self.store.signInRequest(id: id) else { throw APIError.signInRequestNotFound }
        return record
    }

    private func whyNotPending(_ id: String) async throws -> APIError {
        try await self.reload(id).status == .pending ? .signInRequestExpired : .signInRequestNotPending
    }

    private func recordFailure(_ record: SignInRequestRecord, reason: String, registrationId: String, userId: String) async {
        let event = self.audit.event(.signInRequestFailed, .failure, userId: userId, registrationId: registrationId,
            reason: "request \(record.id) \(reason)")
        if (try? await self.store.insertAuditEvent(event)) != nil { self.audit.committed([event]) }
    }

    /// A uniform number from 10 to 99 (rejection sampling over random bytes).
    func randomNumber() -> Int {
        while true {
            for byte in self.secrets.randomBytes(8) where byte < 180 { return 10 + Int(byte) % 90 }
        }
    }

    /// Three distinct numbers, `number` among them at a uniformly random position.
    func choices(around number: Int) -> [Int] {
        var decoys: [Int] = []
        while decoys.count < 2 {
            let candidate = self.randomNumber()
            if candidate != number && !decoys.contains(candidate) { decoys.append(candidate) }
        }
        var position = 0
        search: while true {
            for byte in self.secrets.randomBytes(4) where byte < 255 {
                position = Int(byte) % 3
                break search
            }
        }
        var choices = decoys
        choices.insert(number, at: position)
        return choices
    }
}

extension Optional {
    /// `map` with an asynchronous transform.
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
