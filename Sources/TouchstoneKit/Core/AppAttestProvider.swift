public import Foundation

/// The device's App Attest service: on iOS `DCAppAttestService` (``DeviceCheckAppAttestProvider``), in tests a
/// stand-in. The SDK core drives it; the provider only wraps the three system calls.
public protocol AppAttestProvider: Sendable {
    /// Whether the device supports App Attest (simulators and some Macs do not).
    var isSupported: Bool { get async }
    /// `DCAppAttestService.generateKey()`: a new Secure Enclave key; returns its key id (base64).
    func generateKey() async throws -> String
    /// `attestKey(_:clientDataHash:)`: Apple's attestation object for the key.
    func attestKey(_ keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8]
    /// `generateAssertion(_:clientDataHash:)`.
    func generateAssertion(_ keyId: String, clientDataHash: [UInt8]) async throws -> [UInt8]
}
