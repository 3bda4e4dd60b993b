import Testing
import TouchstoneKit

/// The Apple adapters' error translation, checked here because the adapters themselves only build on Apple platforms.
struct PlatformErrorMappingTests {
    @Test(arguments: [
        (-2, BiometricLoginError.Code.userCancelled), (-4, .userCancelled), (-9, .userCancelled), (-3, .userFallback),
        (-1, .userFallback), (-8, .lockedOut), (-7, .notEnrolled), (-5, .passcodeNotSet), (-6, .notAvailable),
        (-12, .notAvailable), (-13, .notAvailable), (-11, .notAvailable), (-10, .internalFailure), (-1004, .internalFailure),
        (-14, .internalFailure), (12345, .internalFailure),
    ])
    func everyLocalAuthenticationErrorHasAMeaning(code: Int, expected: BiometricLoginError.Code) {
        #expect(PlatformErrorMapping.error(forLAErrorCode: code, message: "m").code == expected)
    }

    @Test func availabilityFollowsTheReasonBiometricsCannotBeUsed() {
        #expect(PlatformErrorMapping.availability(forLAErrorCode: -7) == .notEnrolled)
        #expect(PlatformErrorMapping.availability(forLAErrorCode: -5) == .passcodeNotSet)
        #expect(PlatformErrorMapping.availability(forLAErrorCode: -8) == .lockedOut)
        #expect(PlatformErrorMapping.availability(forLAErrorCode: -6) == .notAvailable)
        #expect(PlatformErrorMapping.availability(forLAErrorCode: 999) == .notAvailable)
    }

    @Test(arguments: [
        (Int32(-25300), BiometricLoginError.Code.notEnabled), (-128, .userCancelled), (-25293, .keyInvalidated),
        (-25308, .notAvailable), (-25299, .internalFailure), (-1, .internalFailure),
    ])
    func keychainStatusesHaveAMeaning(status: Int32, expected: BiometricLoginError.Code) {
        #expect(PlatformErrorMapping.error(forSecurityStatus: status, operation: "sign").code == expected)
    }

    @Test func aChangedDomainStateMeansBiometricsChanged() {
        #expect(PlatformErrorMapping.biometryChanged(since: [1, 2], now: [1, 3]))
        #expect(!PlatformErrorMapping.biometryChanged(since: [1, 2], now: [1, 2]))
        #expect(!PlatformErrorMapping.biometryChanged(since: nil, now: [1, 2]))
        #expect(!PlatformErrorMapping.biometryChanged(since: [1], now: nil))
    }
}

struct PasskeyErrorMappingTests {
    @Test(arguments: [
        (1000, PasskeyError.Code.unknown), (1001, .cancelled), (1002, .invalidResponse), (1003, .notHandled), (1004, .failed),
        (1005, .notInteractive), (1006, .matchedExcludedCredential), (1099, .unknown),
    ])
    func everyASAuthorizationErrorCodeHasAPasskeyErrorCode(rawValue: Int, expected: PasskeyError.Code) {
        #expect(PlatformErrorMapping.passkeyError(forASAuthorizationErrorCode: rawValue, message: "m").code == expected)
    }

    @Test func serverAnswersMapToTheirOwnCodes() async throws {
        #expect(PasskeyError(.credentialNotFound, "").code == .credentialNotFound)
        #expect(PlatformErrorMapping.passkeyError(forASAuthorizationErrorCode: 1099, message: "m").message.contains("1099"))
    }
}
