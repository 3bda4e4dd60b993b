import ArgumentParser
import Foundation
import TouchstoneConfirmation

/// `touchstone confirmation verify`: checks approval evidence offline.
struct Confirmation: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Transaction confirmations.", subcommands: [Verify.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the evidence of an approval without the server (a device key's or a passkey's signature).",
            discussion: """
                FILE is the answer of GET /v1/confirmations/{id}/evidence ({"evidence": {...}}) or the evidence object \\
                alone; '-' reads standard input. Prints what was approved; exits 1 with the reason when the evidence \\
                does not hold.
                """
        )

        @Argument(help: "The evidence JSON file, or - for standard input.") var file: String

        struct Output: Encodable {
            var verified: Bool
            var confirmationId: String?
            var method: String?
            var summary: String?
            var payloadSha256: String?
            var userVerified: Bool?
            var reason: String?
        }

        func run() async throws {
            let data: Data
            if self.file == "-" {
                data = FileHandle.standardInput.readDataToEndOfFile()
            } else {
                guard let contents = FileManager.default.contents(atPath: self.file) else { throw ValidationError("cannot read \(self.file)") }
                data = contents
            }
            struct Wrapped: Decodable { var evidence: ConfirmationEvidence }
            guard let evidence = (try? JSONDecoder().decode(Wrapped.self, from: data).evidence) ?? (try? JSONDecoder().decode(ConfirmationEvidence.self, from: data))
            else {
                throw ValidationError("\(self.file) is not confirmation evidence")
            }
            let output: Output
            var failed = false
            do {
                let verified = try evidence.verify()
                output = Output(
                    verified: true,
                    confirmationId: verified.payload.confirmationId,
                    method: verified.method,
                    summary: verified.payload.summary,
                    payloadSha256: evidence.payloadSha256,
                    userVerified: verified.userVerified
                )
            } catch {
                output = Output(verified: false, confirmationId: evidence.confirmationId, method: evidence.method, reason: error.reason)
                failed = true
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            print(String(decoding: try encoder.encode(output), as: UTF8.self))
            if failed { throw ExitCode(1) }
        }
    }
}
