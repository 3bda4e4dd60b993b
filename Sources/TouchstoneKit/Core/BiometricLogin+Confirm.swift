public import Foundation

extension BiometricLogin {
    /// The fields of a confirmation payload the device checks before it signs.
    struct PayloadFields: Decodable {
        var confirmationId: String
        var summary: String
        var userId: String
        var version: Int
    }

    /// Approves a transaction confirmation with this device's key: what you see is what you sign.
    ///
    /// The SDK reads the payload itself, refuses it unless its id and summary are exactly those of `confirmation` and
    /// it is for the enrolled user, shows **the payload's** summary in the biometric prompt, signs the payload's UTF-8
    /// bytes, and sends the signature. The receipt is for the app's backend, which verifies it with the JWKS.
    ///
    /// ```swift
    /// let created = try await myBackend.requestPayment(...)   // the backend made the confirmation (admin key)
    /// let approved = try await biometrics.confirm(ConfirmationRequest(id: created.id, summary: created.summary, payload: created.payload))
    /// try await myBackend.submit(receipt: approved.receipt)
    /// ```
    ///
    /// - Parameter promptPrefix: Put before the summary in the prompt (e.g. "Approve: ").
    /// - Throws: ``BiometricLoginError``: `.confirmationMismatch` (nothing was signed), `.notEnabled`, prompt outcomes,
    ///   `.confirmationExpired`, `.confirmationNotPending`, `.registrationLocked`, `.registrationRevoked`, `.server`
    ///   (`invalid_signature`, `registration_not_allowed`, `confirmation_not_found`), `.transport`.
    public func confirm(_ confirmation: ConfirmationRequest, promptPrefix: String = "") async throws -> ApprovedConfirmation {
        let enrollment = try await self.requireEnrollmentWithKey()
        let fields: PayloadFields
        do {
            fields = try JSONDecoder().decode(PayloadFields.self, from: Data(confirmation.payload.utf8))
        } catch {
            throw BiometricLoginError(.confirmationMismatch, "the payload is not a confirmation payload")
        }
        // Compared as bytes: "é" and "e\u{301}" are equal Strings but not the same text on the screen or in the signature.
        guard fields.version == 1, Array(fields.confirmationId.utf8) == Array(confirmation.id.utf8) else {
            throw BiometricLoginError(.confirmationMismatch, "the payload is for another confirmation")
        }
        guard Array(fields.summary.utf8) == Array(confirmation.summary.utf8) else {
            throw BiometricLoginError(.confirmationMismatch, "the payload's summary is not the one shown")
        }
        guard fields.userId == enrollment.userId else {
            throw BiometricLoginError(.confirmationMismatch, "the confirmation is for another user than this device's")
        }
        do {
            let verification = try await self.verifier.verifyUser(reason: promptPrefix + fields.summary)
            let signature = try await self.sign(Array(confirmation.payload.utf8), with: enrollment, verification: verification)
            return try await self.client.approveConfirmation(id: confirmation.id, registrationId: enrollment.registrationId, signature: signature)
        } catch let error as BiometricLoginError {
            throw try await self.handleLoginError(error, enrollment: enrollment)
        }
    }
}
