public import Foundation
import NIOConcurrencyHelpers
public import TouchstoneServer

/// A mail transport that keeps what it is given (the server's tests inject it instead of SMTP or a folder), with
/// helpers to read the codes and links out of the mails as a user would. ``failing`` makes it refuse, to test retries.
public final class TestMailbox: MailTransport, Sendable {
    private let state = NIOLockedValueBox<(mails: [OutgoingMail], failures: [any Error], attempts: Int)>(([], [], 0))

    public init() {}

    public func deliver(_ mail: OutgoingMail) async throws {
        try self.state.withLockedValue { state in
            state.attempts += 1
            if !state.failures.isEmpty { throw state.failures.removeFirst() }
            state.mails.append(mail)
        }
    }

    /// Deliveries attempted so far, failed ones included.
    public var attempts: Int { self.state.withLockedValue { $0.attempts } }

    /// Waits until `count` deliveries were attempted, polling with a generous limit (60 s: on a loaded machine the
    /// background sender can take well over the 10 s this once allowed; it returns as soon as they were).
    public func waitForAttempts(_ count: Int) async throws {
        for _ in 0..<6000 {
            if self.attempts >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw MailboxError("only \(self.attempts) of \(count) deliveries were attempted")
    }

    /// The next `count` deliveries fail with `error`.
    public func fail(next count: Int, with error: any Error) {
        self.state.withLockedValue { $0.failures += Array(repeating: error, count: count) }
    }

    public var mails: [OutgoingMail] { self.state.withLockedValue { $0.mails } }

    /// The mails to `address` so far, oldest first, optionally only of `kind`.
    public func mails(to address: String, kind: String? = nil) -> [OutgoingMail] {
        self.mails.filter { $0.to == address.lowercased() && (kind == nil || $0.kind == kind) }
    }

    /// Waits (polling up to 60 s, a generous limit: the server's sender runs in the background, and a loaded CI
    /// machine once needed more than 10 s) until `address` has `count` mails of `kind`,
    /// and returns the last.
    public func waitForMail(to address: String, kind: String, count: Int = 1) async throws -> OutgoingMail {
        for _ in 0..<6000 {
            let mails = self.mails(to: address, kind: kind)
            if mails.count >= count { return mails[count - 1] }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw MailboxError("no \(kind) mail #\(count) to \(address) arrived; mails: \(self.mails.map { "\($0.kind) to \($0.to)" })")
    }

    struct MailboxError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

extension OutgoingMail {
    /// The text part, quoted-printable undone.
    public var text: String {
        let body = self.data.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        var bytes: [UInt8] = []
        let lines = body.components(separatedBy: "\r\n")
        for (index, line) in lines.enumerated() {
            var chars = Array(line.utf8)
            let soft = chars.last == UInt8(ascii: "=")
            if soft { chars.removeLast() }
            var i = 0
            while i < chars.count {
                if chars[i] == UInt8(ascii: "="), i + 2 < chars.count,
                    let byte = UInt8(String(decoding: chars[(i + 1)...(i + 2)], as: UTF8.self), radix: 16)
                {
                    bytes.append(byte)
                    i += 3
                } else {
                    bytes.append(chars[i])
                    i += 1
                }
            }
            if !soft && index < lines.count - 1 { bytes.append(0x0A) }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The subject header (ASCII subjects only; the tests' product names are ASCII).
    public var subject: String? {
        self.data.components(separatedBy: "\r\n").first { $0.hasPrefix("Subject: ") }.map { String($0.dropFirst(9)) }
    }

    /// The code in the text: a line `Your code: 123456`, or a line of the six digits alone.
    public var code: String? {
        for line in self.text.split(separator: "\n") {
            let candidate = line.hasPrefix("Your code: ") ? line.dropFirst("Your code: ".count) : line[...]
            if candidate.count == 6, candidate.allSatisfy(\.isASCII), candidate.allSatisfy(\.isNumber) { return String(candidate) }
        }
        return nil
    }

    /// The token of the first link whose fragment starts with `name=`.
    public func token(_ name: String) -> String? {
        guard let range = self.text.range(of: "#\(name)=[A-Za-z0-9_-]{43}", options: .regularExpression) else { return nil }
        return String(self.text[range].dropFirst(name.count + 2))
    }
}
