/// Extracts the DER bytes from a PEM document (RFC 7468).
enum PEM {
    /// Returns the label and DER bytes of the first PEM block in `text`, or `nil` if there is none or it is malformed.
    static func decode(_ text: String) -> (label: String, der: [UInt8])? {
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmedOfSpaces() }
        guard let beginIndex = lines.firstIndex(where: { $0.hasPrefix("-----BEGIN ") && $0.hasSuffix("-----") }) else {
            return nil
        }
        let label = String(lines[beginIndex].dropFirst("-----BEGIN ".count).dropLast(5))
        let endLine = "-----END \(label)-----"
        guard let endIndex = lines[beginIndex...].firstIndex(of: endLine), endIndex > beginIndex else { return nil }
        let body = lines[(beginIndex + 1)..<endIndex].filter { !$0.contains(":") }.joined()
        guard !body.isEmpty, let der = Base64.decode(body) else { return nil }
        return (label, der)
    }
}

extension StringProtocol {
    fileprivate func trimmedOfSpaces() -> String {
        let spaces: Set<Character> = [" ", "\t", "\r"]
        return String(self.drop(while: { spaces.contains($0) }).reversed().drop(while: { spaces.contains($0) }).reversed())
    }
}
