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
