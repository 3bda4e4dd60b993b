import Foundation
import Testing
import TouchstoneStore

/// Verified addresses, mailed codes and links, recovery codes and the mail queue (issue #33), on every engine.
struct RecoveryStoreTests {
    static let t0 = StoreTests.t0

    static func user(_ id: String, _ email: String) -> UserRecord {
        UserRecord(id: id, email: email, displayName: nil, passwordHash: "x", createdAt: t0)
    }

    static func challenge(_ user: String, _ purpose: EmailChallengePurpose, code: String = "c1", token: String = "t1", email: String = "a@example.com") -> EmailChallengeRecord {
        EmailChallengeRecord(userId: user, purpose: purpose, email: email, codeHash: code, tokenHash: token, createdAt: t0, expiresAt: t0.addingTimeInterval(600))
    }

    @Test(arguments: TestDatabase.available)
    func aNewChallengeReplacesTheLastAndIsConsumedOnce(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertUser(Self.user("u1", "a@example.com"))
            try await store.replaceEmailChallenge(Self.challenge("u1", .passwordReset, code: "c1", token: "t1"))
            try await store.replaceEmailChallenge(Self.challenge("u1", .signInCode, code: "s1", token: "ts1"))
            try await store.replaceEmailChallenge(Self.challenge("u1", .passwordReset, code: "c2", token: "t2"))
            #expect(try await store.emailChallenge(tokenHash: "t1") == nil)
            #expect(try await store.emailChallenge(tokenHash: "t2")?.codeHash == "c2")
            #expect(try await store.emailChallenge(userId: "u1", purpose: .signInCode)?.codeHash == "s1")
            // The replaced code does not work; an expired one neither; the right one once.
            #expect(try await store.consumeEmailChallenge(userId: "u1", purpose: .passwordReset, codeHash: "c1", at: Self.t0) == nil)
            #expect(try await store.consumeEmailChallenge(userId: "u1", purpose: .passwordReset, codeHash: "c2", at: Self.t0.addingTimeInterval(600)) == nil)
            async let first = store.consumeEmailChallenge(userId: "u1", purpose: .passwordReset, codeHash: "c2", at: Self.t0)
            async let second = store.consumeEmailChallenge(userId: "u1", purpose: .passwordReset, codeHash: "c2", at: Self.t0)
            let results = try await [first, second]
            #expect(results.compactMap { $0 }.count == 1)
            #expect(try await store.emailChallenge(userId: "u1", purpose: .passwordReset) == nil)
            #expect(try await store.emailChallenge(userId: "u1", purpose: .signInCode) != nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func wrongCodesCountAndTheLimitDeletesTheChallenge(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertUser(Self.user("u1", "a@example.com"))
            try await store.replaceEmailChallenge(Self.challenge("u1", .verifyEmail))
            for expected in 1...4 {
                #expect(try await store.recordEmailChallengeFailure(userId: "u1", purpose: .verifyEmail, codeHash: "c1", limit: 5) == expected)
            }
            #expect(try await store.emailChallenge(userId: "u1", purpose: .verifyEmail)?.attempts == 4)
            // A failure counted against a replaced challenge (another code hash) changes nothing.
            #expect(try await store.recordEmailChallengeFailure(userId: "u1", purpose: .verifyEmail, codeHash: "other", limit: 5) == nil)
            #expect(try await store.recordEmailChallengeFailure(userId: "u1", purpose: .verifyEmail, codeHash: "c1", limit: 5) == 5)
            #expect(try await store.emailChallenge(userId: "u1", purpose: .verifyEmail) == nil)
            #expect(try await store.recordEmailChallengeFailure(userId: "u1", purpose: .verifyEmail, codeHash: "c1", limit: 5) == nil)
        }
    }

    @Test(arguments: TestDatabase.available)
    func verificationAndAddressChange(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertUser(Self.user("u1", "a@example.com"))
            try await store.insertUser(Self.user("u2", "b@example.com"))
            #expect(try await store.user(id: "u1")?.emailVerifiedAt == nil)
            // Verifying an address the account no longer has does nothing.
            #expect(try await store.markEmailVerified(userId: "u1", email: "old@example.com", at: Self.t0) == false)
            #expect(try await store.markEmailVerified(userId: "u1", email: "a@example.com", at: Self.t0))
            #expect(try await store.markEmailVerified(userId: "u1", email: "a@example.com", at: Self.t0.addingTimeInterval(5)))
            #expect(try await store.user(id: "u1")?.emailVerifiedAt == Self.t0)
            await #expect(throws: StoreError.conflict("")) { try await store.changeEmail(userId: "u1", to: "b@example.com", at: Self.t0) }
            #expect(try await store.changeEmail(userId: "u1", to: "c@example.com", at: Self.t0.addingTimeInterval(9)))
            #expect(try await store.user(email: "c@example.com")?.emailVerifiedAt == Self.t0.addingTimeInterval(9))
            #expect(try await store.changeEmail(userId: "nobody", to: "d@example.com", at: Self.t0) == false)
            // Deleting the user deletes its challenges and codes.
            try await store.replaceEmailChallenge(Self.challenge("u1", .verifyEmail))
            try await store.replaceRecoveryCodes(userId: "u1", codeHashes: ["r1"], at: Self.t0)
            #expect(try await store.deleteUser(id: "u1", at: Date()))
            #expect(try await store.emailChallenge(tokenHash: "t1") == nil)
            #expect(try await store.unusedRecoveryCodeCount(userId: "u1") == 0)
        }
    }

    @Test(arguments: TestDatabase.available)
    func recoveryCodesAreSingleUseAndReplaced(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            try await store.insertUser(Self.user("u1", "a@example.com"))
            try await store.replaceRecoveryCodes(userId: "u1", codeHashes: ["r1", "r2", "r3"], at: Self.t0)
            #expect(try await store.unusedRecoveryCodeCount(userId: "u1") == 3)
            async let first = store.useRecoveryCode(userId: "u1", codeHash: "r1", at: Self.t0)
            async let second = store.useRecoveryCode(userId: "u1", codeHash: "r1", at: Self.t0)
            #expect(try await [first, second].filter { $0 }.count == 1)
            #expect(try await store.useRecoveryCode(userId: "u1", codeHash: "nope", at: Self.t0) == false)
            #expect(try await store.unusedRecoveryCodeCount(userId: "u1") == 2)
            try await store.replaceRecoveryCodes(userId: "u1", codeHashes: ["n1", "n2"], at: Self.t0)
            #expect(try await store.useRecoveryCode(userId: "u1", codeHash: "r2", at: Self.t0) == false)
            #expect(try await store.unusedRecoveryCodeCount(userId: "u1") == 2)
        }
    }

    @Test(arguments: TestDatabase.available)
    func theMailQueueLeasesRetriesFailsAndDeletesSentMail(database: TestDatabase) async throws {
        try await StoreTests.withStore(database) { store in
            for (index, id) in ["m1", "m2", "m3"].enumerated() {
                try await store.enqueueMail(QueuedMailRecord(id: id, kind: "verify_email", sealedMessage: [1, 2, UInt8(index)], createdAt: Self.t0.addingTimeInterval(Double(index))))
            }
            let lease = Self.t0.addingTimeInterval(60)
            let claimed = try await store.claimDueMail(now: Self.t0.addingTimeInterval(5), leaseUntil: lease, token: "A", limit: 2)
            #expect(claimed.map(\.id) == ["m1", "m2"])
            #expect(claimed.first?.sealedMessage == [1, 2, 0])
            // Leased mail is nobody else's until the lease runs out.
            #expect(try await store.claimDueMail(now: Self.t0.addingTimeInterval(5), leaseUntil: lease, token: "B", limit: 10).map(\.id) == ["m3"])
            #expect(try await store.claimDueMail(now: lease, leaseUntil: lease.addingTimeInterval(60), token: "C", limit: 10).map(\.id) == ["m1", "m2", "m3"])
            // The old lease's holder can no longer finish.
            #expect(try await store.finishMailAttempt(id: "m1", token: "A", outcome: .sent) == false)
            #expect(try await store.finishMailAttempt(id: "m1", token: "C", outcome: .sent))
            #expect(try await store.finishMailAttempt(id: "m2", token: "C", outcome: .retry(at: lease.addingTimeInterval(300), error: "421 busy")))
            #expect(try await store.finishMailAttempt(id: "m3", token: "C", outcome: .failed(error: "550 no such user")))
            let stats = try await store.mailQueueStatistics()
            #expect(stats == MailQueueStatistics(pending: 1, failed: 1, oldestPendingAt: Self.t0.addingTimeInterval(1)))
            #expect(try await store.claimDueMail(now: lease.addingTimeInterval(299), leaseUntil: lease.addingTimeInterval(999), token: "D", limit: 10).isEmpty)
            let retried = try await store.claimDueMail(now: lease.addingTimeInterval(300), leaseUntil: lease.addingTimeInterval(999), token: "D", limit: 10)
            #expect(retried.map(\.id) == ["m2"])
            #expect(retried.first?.attempts == 1)
            #expect(retried.first?.lastError == "421 busy")
            #expect(try await store.purgeFailedMail(before: Self.t0.addingTimeInterval(3)) == 1)
            #expect(try await store.mailQueueStatistics() == MailQueueStatistics(pending: 1, failed: 0, oldestPendingAt: Self.t0.addingTimeInterval(1)))
        }
    }
}
