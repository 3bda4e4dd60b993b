extension StringProtocol {
    /// The text without leading and trailing ASCII spaces and tabs (what HTTP header values may carry around them).
    ///
    /// Byte-level: Foundation's `trimmingCharacters(in:)` bridges through NSString on Linux, which costs more than the
    /// rest of reading a bearer token.
    var trimmingASCIISpaces: Substring {
        let whole = Substring(self)
        let utf8 = whole.utf8
        var start = utf8.startIndex
        var end = utf8.endIndex
        while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start = utf8.index(after: start) }
        while end > start {
            let before = utf8.index(before: end)
            guard utf8[before] == 0x20 || utf8[before] == 0x09 else { break }
            end = before
        }
        return Substring(utf8[start..<end])
    }
}
