public import Foundation
public import TouchstoneStore

// MARK: SignUpStore
extension ComposedStore {
    public func insertPendingSignUp(_ signUp: PendingSignUpRecord) async throws {
        try await self.signUps.insertPendingSignUp(signUp)
    }
    public func consumePendingSignUp(id: String, kind: PendingSignUpRecord.Kind) async throws -> PendingSignUpRecord? {
        try await self.signUps.consumePendingSignUp(id: id, kind: kind)
    }
}

// MARK: DPoPStore
extension ComposedStore {
    public func recordDPoPProof(thumbprint: String, jti: String, expiresAt: Date) async throws -> Bool {
        try await self.dpop.recordDPoPProof(thumbprint: thumbprint, jti: jti, expiresAt: expiresAt)
    }
}

// MARK: DeferredWorkStore

extension ComposedStore {
    public func insertDeferredWork(_ work: DeferredWorkRecord) async throws {
        try await self.deferredWork.insertDeferredWork(work)
    }
    public func claimDeferredWork(now: Date, leaseUntil: Date, token: String, kinds: [String], limit: Int) async throws -> [DeferredWorkRecord] {
        try await self.deferredWork.claimDeferredWork(now: now, leaseUntil: leaseUntil, token: token, kinds: kinds, limit: limit)
    }
    public func finishDeferredWork(id: String, token: String) async throws -> Bool {
        try await self.deferredWork.finishDeferredWork(id: id, token: token)
    }
    public func postponeDeferredWork(id: String, token: String, until: Date) async throws {
        try await self.deferredWork.postponeDeferredWork(id: id, token: token, until: until)
    }
    public func deferredWorkBacklog() async throws -> (count: Int, oldest: Date?) {
        try await self.deferredWork.deferredWorkBacklog()
    }
}
