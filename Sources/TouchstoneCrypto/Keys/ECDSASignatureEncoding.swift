/// Converts the ECDSA signature encodings clients send into the raw `r‖s` form.
public enum ECDSASignatureEncoding {
    static let scalarLength = 32

    /// The raw `r‖s` readings of `signature`: itself when it is 64 bytes, and its DER (X9.62 `Ecdsa-Sig-Value`)
    /// decoding when it parses as one. A 64-byte DER signature is rare but possible, so both are tried.
    static func rawCandidates(_ signature: [UInt8]) -> [[UInt8]] {
        var candidates: [[UInt8]] = []
        if signature.count == 2 * scalarLength { candidates.append(signature) }
        if let raw = rawFromDER(signature) { candidates.append(raw) }
        return candidates
    }

    /// Decodes `SEQUENCE { INTEGER r, INTEGER s }` strictly (DER: minimal lengths and integers, no negative integers,
    /// no trailing bytes) into `r‖s`, each left-padded to `scalarLength` bytes (32 for P-256, 48 for P-384, 66 for
    /// P-521); `nil` when it is not such a structure or a scalar is longer.
    ///
    /// It accepts what swift-crypto's `ECDSASignature(derRepresentation:)` accepts, for about a third of its cost,
    /// into a form (`rawRepresentation`) that swift-crypto takes without parsing again.
    public static func rawFromDER(_ signature: [UInt8], scalarLength: Int = 32) -> [UInt8]? {
        // Two integers of at most scalarLength + 1 bytes, each with a tag and a length of at most two bytes.
        guard scalarLength > 0, signature.count <= 2 * (scalarLength + 4) + 3 else { return nil }
        do {
            var outer = DERReader(signature[...])
            var sequence = DERReader(try outer.read(.sequence))
            try outer.expectEnd()
            let r = try sequence.readUnsignedInteger()
            let s = try sequence.readUnsignedInteger()
            try sequence.expectEnd()
            guard r.count <= scalarLength, s.count <= scalarLength else { return nil }
            return [UInt8](unsafeUninitializedCapacity: 2 * scalarLength) { buffer, count in
                buffer.initialize(repeating: 0)
                for (offset, byte) in r.enumerated() { buffer[scalarLength - r.count + offset] = byte }
                for (offset, byte) in s.enumerated() { buffer[2 * scalarLength - s.count + offset] = byte }
                count = 2 * scalarLength
            }
        } catch {
            return nil
        }
    }
}
