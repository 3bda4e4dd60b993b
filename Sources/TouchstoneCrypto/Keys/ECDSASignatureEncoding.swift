/// Converts the ECDSA signature encodings clients send into the raw `r‖s` form.
enum ECDSASignatureEncoding {
    static let scalarLength = 32

    /// The raw `r‖s` readings of `signature`: itself when it is 64 bytes, and its DER (X9.62 `Ecdsa-Sig-Value`)
    /// decoding when it parses as one. A 64-byte DER signature is rare but possible, so both are tried.
    static func rawCandidates(_ signature: [UInt8]) -> [[UInt8]] {
        var candidates: [[UInt8]] = []
        if signature.count == 2 * scalarLength { candidates.append(signature) }
        if let raw = rawFromDER(signature) { candidates.append(raw) }
        return candidates
    }

    /// Decodes `SEQUENCE { INTEGER r, INTEGER s }` strictly (no trailing bytes) into 64 bytes.
    static func rawFromDER(_ signature: [UInt8]) -> [UInt8]? {
        guard signature.count <= 80 else { return nil }
        do {
            var outer = DERReader(signature[...])
            var sequence = DERReader(try outer.read(.sequence))
            try outer.expectEnd()
            let r = try sequence.readUnsignedInteger()
            let s = try sequence.readUnsignedInteger()
            try sequence.expectEnd()
            guard r.count <= scalarLength, s.count <= scalarLength else { return nil }
            return [UInt8](repeating: 0, count: scalarLength - r.count) + r
                + [UInt8](repeating: 0, count: scalarLength - s.count) + s
        } catch {
            return nil
        }
    }
}
