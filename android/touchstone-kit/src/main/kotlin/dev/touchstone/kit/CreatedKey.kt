package dev.touchstone.kit

/**
 * A key the [DeviceKeyStore] made: its public key and, when the store can attest it, the certificate chain.
 *
 * @property publicKey SubjectPublicKeyInfo DER (`PublicKey.getEncoded()`).
 * @property attestationChain The Keystore attestation chain, leaf first (DER), or null.
 */
class CreatedKey(val publicKey: ByteArray, val attestationChain: List<ByteArray>?)
