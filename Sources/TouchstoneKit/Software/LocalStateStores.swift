public import Foundation

/// Local state in memory: for tests.
public actor InMemoryStateStore: LocalStateStore {
    private var enrollment: LocalEnrollment?
    private var storedDeviceId: String?
    private var storedAppAttestKeyId: String?

    public init(enrollment: LocalEnrollment? = nil, deviceId: String? = nil) {
        self.enrollment = enrollment
        self.storedDeviceId = deviceId
    }

    public func loadEnrollment() async throws -> LocalEnrollment? { self.enrollment }
    public func saveEnrollment(_ enrollment: LocalEnrollment) async throws { self.enrollment = enrollment }
    public func clearEnrollment() async throws { self.enrollment = nil }

    public func deviceId() async throws -> String {
        if let storedDeviceId { return storedDeviceId }
        let created = UUID().uuidString.lowercased()
        self.storedDeviceId = created
        return created
    }

    public func appAttestKeyId() async throws -> String? { self.storedAppAttestKeyId }
    public func saveAppAttestKeyId(_ keyId: String?) async throws { self.storedAppAttestKeyId = keyId }

    private var storedCredential: StoredDeviceCredential?
}

extension InMemoryStateStore: DeviceCredentialStore {
    public func loadDeviceCredential(registrationId: String) async throws -> String? {
        self.storedCredential.flatMap { $0.registrationId == registrationId ? $0.credential : nil }
    }

    public func saveDeviceCredential(_ credential: String, registrationId: String) async throws {
        self.storedCredential = StoredDeviceCredential(registrationId: registrationId, credential: credential)
    }

    public func clearDeviceCredential() async throws { self.storedCredential = nil }
}

/// Local state as JSON files (mode 0600) in a directory (mode 0700): `enrollment.json` and `device-id`.
public actor FileStateStore: LocalStateStore {
    public nonisolated let directory: URL

    public init(directory: URL) throws {
        try FileManager.default.createDirectory(
            at: directory,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        self.directory = directory
    }

    private var enrollmentURL: URL { self.directory.appendingPathComponent("enrollment.json") }
    private var deviceIdURL: URL { self.directory.appendingPathComponent("device-id") }
    private var appAttestKeyIdURL: URL { self.directory.appendingPathComponent("app-attest-key-id") }

    public func appAttestKeyId() async throws -> String? {
        guard let data = try? Data(contentsOf: self.appAttestKeyIdURL) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    public func saveAppAttestKeyId(_ keyId: String?) async throws {
        if let keyId {
            try writePrivateFile(Data(keyId.utf8), to: self.appAttestKeyIdURL)
        } else if FileManager.default.fileExists(atPath: self.appAttestKeyIdURL.path) {
            try FileManager.default.removeItem(at: self.appAttestKeyIdURL)
        }
    }

    public func loadEnrollment() async throws -> LocalEnrollment? {
        guard FileManager.default.fileExists(atPath: self.enrollmentURL.path) else { return nil }
        return try JSONDecoder().decode(LocalEnrollment.self, from: Data(contentsOf: self.enrollmentURL))
    }

    public func saveEnrollment(_ enrollment: LocalEnrollment) async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try writePrivateFile(encoder.encode(enrollment), to: self.enrollmentURL)
    }

    public func clearEnrollment() async throws {
        if FileManager.default.fileExists(atPath: self.enrollmentURL.path) {
            try FileManager.default.removeItem(at: self.enrollmentURL)
        }
    }

    public func deviceId() async throws -> String {
        if let data = try? Data(contentsOf: self.deviceIdURL),
            let text = String(data: data, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines), !text.isEmpty
        {
            return text
        }
        let created = UUID().uuidString.lowercased()
        try writePrivateFile(Data(created.utf8), to: self.deviceIdURL)
        return created
    }
}

extension FileStateStore: DeviceCredentialStore {
    private var deviceCredentialURL: URL { self.directory.appendingPathComponent("device-credential.json") }

    public func loadDeviceCredential(registrationId: String) async throws -> String? {
        guard let data = try? Data(contentsOf: self.deviceCredentialURL),
            let stored = try? JSONDecoder().decode(StoredDeviceCredential.self, from: data), stored.registrationId == registrationId
        else {
            return nil
        }
        return stored.credential
    }

    public func saveDeviceCredential(_ credential: String, registrationId: String) async throws {
        try writePrivateFile(JSONEncoder().encode(StoredDeviceCredential(registrationId: registrationId, credential: credential)), to: self.deviceCredentialURL)
    }

    public func clearDeviceCredential() async throws {
        if FileManager.default.fileExists(atPath: self.deviceCredentialURL.path) {
            try FileManager.default.removeItem(at: self.deviceCredentialURL)
        }
    }
}
