import Testing
import TouchstoneCrypto

/// The QR encoder of the sign-in pages (issue #34), module for module against a reference encoder.
struct QRCodeTests {
    @Test(arguments: QRCodeVectors.all.indices)
    func theSameModulesAsTheReferenceEncoder(index: Int) throws {
        let vector = QRCodeVectors.all[index]
        let code = try QRCode(text: vector.text, mask: vector.mask)
        #expect(code.version == vector.version && code.size == vector.rows.count)
        for (row, expected) in vector.rows.enumerated() {
            let actual = String((0..<code.size).map { code.isDark(row: row, column: $0) ? "1" : "0" })
            #expect(actual == expected, "row \(row) of \(vector.text.prefix(20))")
        }
    }

    @Test func theSmallestVersionAndTheLimit() throws {
        #expect(try QRCode(text: String(repeating: "a", count: 14)).version == 1)
        #expect(try QRCode(text: String(repeating: "a", count: 15)).version == 2)
        #expect(try QRCode(text: String(repeating: "a", count: 213)).version == 10)
        #expect(try QRCode(text: String(repeating: "a", count: 214)).version == 11)
        #expect(try QRCode(text: String(repeating: "a", count: 666)).version == 20)
        #expect(throws: QRCode.TooLong(bytes: 667)) { try QRCode(text: String(repeating: "a", count: 667)) }
    }

    @Test func theSVGHasTheQuietZoneAndATitle() throws {
        let svg = try QRCode(text: "HELLO").svg(moduleSize: 4, title: "Scan <me> & sign in")
        #expect(svg.hasPrefix("<svg") && svg.contains(#"viewBox="0 0 116 116""#))
        #expect(svg.contains("<title>Scan &lt;me&gt; &amp; sign in</title>"))
        // The top-left finder's first row starts at the quiet zone's edge: 7 dark modules.
        #expect(svg.contains("M16 16h28v4h-28z"))
    }
}
