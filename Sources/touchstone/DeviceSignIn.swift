import ArgumentParser
import Foundation
import TouchstoneKit

/// The simulated phone's side of sign-in approval (issue #34): list, approve (with the number), decline.
extension Device {
    struct SignInRequests: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "sign-in-requests",
            abstract: "List the sign-in requests waiting for this device (read with its device credential; no prompt)."
        )
        @OptionGroup var options: Options

        func run() async throws {
            let login = try self.options.makeLogin()
            try await printingErrors {
                try printJSON(["requests": try await login.pendingSignInRequests()])
            }
        }
    }

    struct ApproveSignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "approve-sign-in",
            abstract: "Approve a sign-in request: pick the number the computer shows, confirm with the (simulated) prompt.",
            discussion: """
                ID is a request from `device sign-in-requests`; --qr takes the URL of a scanned QR code instead \
                (touchstone://sign-in?...). A backchannel (CIBA) request has no number: leave out --number.
                """
        )
        @OptionGroup var options: Options
        @Argument(help: "The request id.") var id: String?
        @Option(name: .long, help: "The number the computer shows (10-99).") var number: Int?
        @Option(name: .long, help: "A scanned sign-in code (touchstone://sign-in?request=...).") var qr: String?

        func validate() throws {
            guard (self.id == nil) != (self.qr == nil) else { throw ValidationError("give a request id or --qr, one of them") }
        }

        func run() async throws {
            let login = try self.options.makeLogin()
            try await printingErrors {
                let request: SignInRequest
                if let qr = self.qr {
                    guard let url = URL(string: qr) else { throw ValidationError("--qr is not a URL") }
                    request = try await login.signInRequest(scannedURL: url)
                } else {
                    request = try await pending(login, self.id ?? "")
                }
                try await login.approveSignIn(request, choice: self.number)
                try printJSON(["signInRequest": ["id": request.requestId, "status": "approved"]])
            }
        }
    }

    struct DeclineSignIn: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "decline-sign-in",
            abstract: "Decline a sign-in request (signed after the simulated prompt); --not-me reports that you did not ask."
        )
        @OptionGroup var options: Options
        @Argument(help: "The request id.") var id: String
        @Flag(name: .customLong("not-me"), help: "You did not ask to sign in (the app's backend hears of it).") var notMe = false

        func run() async throws {
            let login = try self.options.makeLogin()
            try await printingErrors {
                let request = try await pending(login, self.id)
                try await login.declineSignIn(request, reason: self.notMe ? .notMe : .cancel)
                try printJSON(["signInRequest": ["id": request.requestId, "status": "declined", "reason": self.notMe ? "not_me" : "cancel"]])
            }
        }
    }
}

/// The pending request `id`, or `sign_in_request_not_found`.
private func pending(_ login: BiometricLogin, _ id: String) async throws -> SignInRequest {
    guard let request = try await login.pendingSignInRequests().first(where: { $0.requestId == id }) else {
        throw BiometricLoginError(.server, "no pending sign-in request \(id) for this device", serverCode: "sign_in_request_not_found")
    }
    return request
}
