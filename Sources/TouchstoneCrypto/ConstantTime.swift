/// Comparisons whose running time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Whether `a` and `b` are equal, looking at every byte whatever the contents (only the lengths are compared
    /// early: lengths are public).
    public static func equal(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for (x, y) in zip(a, b) { difference |= x ^ y }
        return difference == 0
    }
}
