import Foundation
import Testing

/// Every `TOUCHSTONE_*` variable the server reads is in docs/api.md's configuration table (issue #30, item 3): the
/// settings live with their features now, and a variable added in a feature's folder without documentation fails here.
struct ConfigurationDocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The names in string literals of every Swift file under `Sources/TouchstoneServer` (the settings' readers).
    static func variablesRead() throws -> Set<String> {
        let sources = Self.root.appendingPathComponent("Sources/TouchstoneServer")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)?
            .compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" } ?? []
        let pattern = try Regex(#""(TOUCHSTONE_[A-Z0-9_]+)""#)
        var names = Set<String>()
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: pattern) {
                if let name = match.output[1].substring { names.insert(String(name)) }
            }
        }
        return names
    }

    @Test func everyVariableTheServerReadsIsDocumented() throws {
        let names = try Self.variablesRead()
        #expect(names.count > 50, "found only \(names.count) variables: is the source folder right?")
        let api = try String(contentsOf: Self.root.appendingPathComponent("docs/api.md"), encoding: .utf8)
        let table = try #require(api.range(of: "## Configuration")).upperBound
        let configuration = String(api[table...])
        for name in names.sorted() {
            // `..._FILE` variants are documented beside their variable (`TOUCHSTONE_KEY_ENCRYPTION_KEY` / `..._FILE`).
            let documented = configuration.contains("`\(name)`")
                || (name.hasSuffix("_FILE") && configuration.contains("`\(name.dropLast(5))` / `..._FILE`"))
            #expect(documented, "\(name) is read by the server but not in docs/api.md's configuration table")
        }
    }
}
