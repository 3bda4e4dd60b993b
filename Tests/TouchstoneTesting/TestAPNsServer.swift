public import Foundation
import Crypto
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOConcurrencyHelpers
import NIOCore
public import NIOSSL
import SwiftASN1
import X509

/// A stand-in for Apple's push service on loopback: HTTP/2 over TLS (ALPN h2) with a certificate of its own, recording
/// every `POST /3/device/<token>` and answering as told (200 by default).
public final class TestAPNsServer: Sendable {
    /// One request as received.
    public struct Received: Sendable {
        public var deviceToken: String
        public var headers: [String: String]
        public var body: [UInt8]
        /// Whether it came over HTTP/2 (a stream of a connection), as Apple's service requires.
        public var http2: Bool

        public var json: [String: Any] { ((try? JSONSerialization.jsonObject(with: Data(self.body))) as? [String: Any]) ?? [:] }
    }

    struct Context: RequestContext {
        var coreContext: CoreRequestContextStorage
        var http2: Bool

        init(source: ApplicationRequestContextSource) {
            self.coreContext = .init(source: source)
            // A request of an HTTP/2 connection arrives on a stream channel, whose parent is the connection.
            self.http2 = source.channel.parent != nil
        }
    }

    /// The certificate clients trust (PEM), for `TOUCHSTONE_APNS_CA_FILE` or ``trustRoot``.
    public let certificatePEM: String
    public var trustRoot: NIOSSLCertificate { get throws { try NIOSSLCertificate(bytes: Array(self.certificatePEM.utf8), format: .pem) } }
    public var port: Int { self.boundPort.withLockedValue { $0 } }
    public var url: String { "https://localhost:\(self.port)" }
    public var received: [Received] { self.state.withLockedValue { $0 } }

    private let state = NIOLockedValueBox<[Received]>([])
    /// Answers for the next requests, in order (status, Apple's reason); then 200.
    private let answers = NIOLockedValueBox<[(Int, String?)]>([])
    private let boundPort = NIOLockedValueBox<Int>(0)
    private let task: NIOLockedValueBox<Task<Void, any Error>?> = .init(nil)

    private init(certificatePEM: String) {
        self.certificatePEM = certificatePEM
    }

    /// Starts the server on 127.0.0.1 (a certificate for `localhost` and 127.0.0.1).
    public static func start() async throws -> TestAPNsServer {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName("localhost") }
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(key.publicKey),
            notValidBefore: now.addingTimeInterval(-3600), notValidAfter: now.addingTimeInterval(86_400),
            issuer: name, subject: name, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(key)
        )
        let pem = try certificate.serializeAsPEM().pemString
        let server = TestAPNsServer(certificatePEM: pem)
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
        )
        tls.applicationProtocols = ["h2", "http/1.1"]
        let router = Router(context: Context.self)
        router.post("/3/device/:token") { request, context -> Response in
            let body = try await request.body.collect(upTo: 8192)
            var headers: [String: String] = [:]
            for field in request.headers { headers[field.name.canonicalName] = field.value }
            server.state.withLockedValue {
                $0.append(Received(deviceToken: context.parameters.get("token") ?? "", headers: headers, body: Array(body.readableBytesView), http2: context.http2))
            }
            let (status, reason) = server.answers.withLockedValue { $0.isEmpty ? (200, nil) : $0.removeFirst() }
            var response = Response(status: .init(code: status), headers: [.init("apns-id")!: UUID().uuidString])
            if let reason { response.body = ResponseBody(byteBuffer: ByteBuffer(string: #"{"reason":"\#(reason)"}"#)) }
            return response
        }
        var logger = Logger(label: "apns-stand-in")
        logger.logLevel = .error
        let (started, continuation) = AsyncStream<Int>.makeStream()
        let app = Application(
            router: router,
            server: try .http2Upgrade(tlsConfiguration: tls),
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "apns-stand-in"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) },
            logger: logger
        )
        server.task.withLockedValue { $0 = Task { try await app.runService(gracefulShutdownSignals: []) } }
        var iterator = started.makeAsyncIterator()
        server.boundPort.withLockedValue { $0 = 0 }
        if let port = await iterator.next() { server.boundPort.withLockedValue { $0 = port } }
        return server
    }

    /// The next requests are answered with `status` (and Apple's `reason`), in order.
    public func answer(_ status: Int, reason: String?, times: Int = 1) {
        self.answers.withLockedValue { $0 += Array(repeating: (status, reason), count: times) }
    }

    /// Waits until `count` requests arrived; false after 60 seconds (a safety net, not a timing assertion).
    public func waitForRequests(_ count: Int) async -> Bool {
        for _ in 0..<1200 {
            if self.received.count >= count { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    public func stop() {
        self.task.withLockedValue { $0?.cancel() }
    }
}
