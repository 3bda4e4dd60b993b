import Foundation
import Testing
import TouchstoneTesting

/// The committed fuzzing corpus replays through every fuzz target in a normal build (scripts/fuzz.sh runs the same
/// targets under libFuzzer and AddressSanitizer).
struct FuzzCorpusTests {
    static let targets = ["cbor", "authenticator-data", "attestation-object", "cose-key", "public-key", "signature", "client-data", "dpop-proof"]

    static var binary: String {
        get throws {
            let fuzz = try ServerProcess.binary.deletingLastPathComponent().appendingPathComponent("touchstone-fuzz")
            guard FileManager.default.isExecutableFile(atPath: fuzz.path) else { throw ProcessError("touchstone-fuzz is not built") }
            return fuzz.path
        }
    }

    static var corpus: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/corpus")
    }

    @Test(arguments: targets)
    func theCorpusReplaysWithoutACrash(target: String) async throws {
        let directory = Self.corpus.appendingPathComponent(target).path
        let seeds = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(seeds.count >= 5, "the seed corpus of \(target) is missing")
        let (status, output) = try await Self.run([target, directory])
        #expect(status == 0)
        #expect(output.contains("\(target): \(seeds.count) inputs, no crash"))
    }

    @Test func unknownTargetsAreRefused() async throws {
        let (status, _) = try await Self.run(["nonsense", "/dev/null"])
        #expect(status == 2)
    }

    static func run(_ arguments: [String]) async throws -> (Int32, String) {
        let (status, output, _) = try await ChildProcess.run(try Self.binary, arguments)
        return (status, output)
    }
}
