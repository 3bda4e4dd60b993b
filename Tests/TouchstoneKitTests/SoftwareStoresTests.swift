import Foundation
import Testing
import TouchstoneCrypto
import TouchstoneKit
import TouchstoneTesting

struct SoftwareStoresTests {
    /// A directory in this process's ``TemporaryFiles/directory`` (removed with it; the tests remove theirs too).
    static func temporaryDirectory() -> URL {
        URL(fileURLWithPath: TemporaryFiles.path("touchstone-kit"))
    }

    @Test(arguments: SignatureAlgorithm.allCases)
    func softwareKeysSignWhatTheServerVerifies(algorithm: SignatureAlgorithm) async throws {
        let directory = Self.temporaryDirectory()
        defer { TemporaryFiles.remove(directory.path) }
        let store = try SoftwareKeyStore(directory: directory)
        let publicKey = try await store.createKey(tag: "k", algorithm: algorithm, policy: .biometryCurrentSet)
        let key = try DevicePublicKey(bytes: publicKey.bytes, algorithm: algorithm)
        let message = Array("challenge".utf8)
        let signature = try await store.sign(message, withKey: "k", verification: UserVerification(verifiedAt: Date()))
        #expect(key.isValidSignature(signature, for: message))
    }

    @Test func rawECDSASignaturesCanBeChosen() async throws {
        let store = SoftwareKeyStore(ecdsaSignatureFormat: .raw)
        _ = try await store.createKey(tag: "k", algorithm: .es256, policy: .userPresence)
        let signature = try await store.sign([1, 2, 3], withKey: "k", verification: UserVerification(verifiedAt: Date()))
        #expect(signature.count == 64)
    }

    @Test func keyFilesArePrivateAndSurviveReopening() async throws {
        let directory = Self.temporaryDirectory()
        defer { TemporaryFiles.remove(directory.path) }
        let store = try SoftwareKeyStore(directory: directory)
        let publicKey = try await store.createKey(tag: "touchstone.abc", algorithm: .es256, policy: .biometryAny)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(files == ["touchstone.abc.key.json"])
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(files[0]).path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let directoryAttributes = try FileManager.default.attributesOfItem(atPath: directory.path)
        #expect((directoryAttributes[.posixPermissions] as? NSNumber)?.intValue == 0o700)

        let reopened = try SoftwareKeyStore(directory: directory)
        #expect(await reopened.keyExists(tag: "touchstone.abc"))
        let signature = try await reopened.sign([9], withKey: "touchstone.abc", verification: UserVerification(verifiedAt: Date()))
        #expect(try DevicePublicKey(bytes: publicKey.bytes, algorithm: .es256).isValidSignature(signature, for: [9]))
        try await reopened.deleteKey(tag: "touchstone.abc")
        #expect(await !store.keyExists(tag: "touchstone.abc"))
        try await reopened.deleteKey(tag: "touchstone.abc")  // deleting twice is fine
    }

    @Test func creatingOverAnExistingTagFails() async throws {
        let store = SoftwareKeyStore()
        _ = try await store.createKey(tag: "k", algorithm: .eddsa, policy: .biometryAny)
        await #expect(throws: BiometricLoginError.self) { try await store.createKey(tag: "k", algorithm: .eddsa, policy: .biometryAny) }
    }

    @Test func signingWithAMissingKeyIsNotEnabled() async throws {
        await #expect(throws: BiometricLoginError(.notEnabled, "")) {
            try await SoftwareKeyStore().sign([1], withKey: "missing", verification: UserVerification(verifiedAt: Date()))
        }
    }

    @Test func fileStateStoreKeepsEnrolmentAndAStableDeviceId() async throws {
        let directory = Self.temporaryDirectory()
        defer { TemporaryFiles.remove(directory.path) }
        let store = try FileStateStore(directory: directory)
        let deviceId = try await store.deviceId()
        #expect(try await store.deviceId() == deviceId)
        #expect(try await store.loadEnrollment() == nil)
        let enrollment = LocalEnrollment(userId: "u", registrationId: "r", keyTag: "t", algorithm: .eddsa, email: "a@example.com")
        try await store.saveEnrollment(enrollment)

        let reopened = try FileStateStore(directory: directory)
        #expect(try await reopened.loadEnrollment() == enrollment)
        #expect(try await reopened.deviceId() == deviceId)
        try await reopened.clearEnrollment()
        #expect(try await reopened.loadEnrollment() == nil)
        #expect(try await reopened.deviceId() == deviceId)  // kept across disable
        let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent("device-id").path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }
}
