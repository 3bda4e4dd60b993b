// Apple platforms only (DeviceCheck). Not built on Linux: the protocol it implements is driven by the SDK core and
// tested there with a stand-in provider.
#if canImport(DeviceCheck)
import DeviceCheck
import Foundation

/// App Attest through `DCAppAttestService.shared` (iOS 14+, on devices with a Secure Enclave; not in the simulator).
@available(iOS 14.0, macOS 11.0, tvOS 15.0, *)
public struct DeviceCheckAppAttestProvider: AppAttestProvider {
    public init() {}

    public var isSupported: Bool {
        get async { DCAppAttestService.shared.isSupported }
    }

    public func generateKey() async throws -> String {
        try await DCAppAttestService.shared.generateKey()
    }

    public func attestKey(_ keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8] {
        [UInt8](try await DCAppAttestService.shared.attestKey(keyId, clientDataHash: Data(clientDataHash)))
    }

    public func generateAssertion(_ keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8] {
        [UInt8](try await DCAppAttestService.shared.generateAssertion(keyId, clientDataHash: Data(clientDataHash)))
    }
}
#endif
