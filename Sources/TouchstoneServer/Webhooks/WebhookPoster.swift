#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import AsyncHTTPClient
import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
public import TouchstoneWebhooks

/// One webhook POST: where, with which headers, what body.
public struct WebhookPost: Sendable {
    public var url: WebhookURL
    public var headers: [(String, String)]
    public var body: [UInt8]

    /// The value of a header (names are lowercase).
    public func header(_ name: String) -> String? { self.headers.first { $0.0 == name }?.1 }
}

/// What an attempt came to: an HTTP answer, or why there was none.
public enum WebhookPostResult: Sendable, Hashable {
    case answered(status: Int)
    case failed(String)
}

/// Posts webhooks over HTTP/1.1 or HTTP/2 (AsyncHTTPClient) against server-side request forgery: the host is resolved
/// here, every address it resolves to is checked against the ``DestinationPolicy``, and the connection goes to the
/// checked address (AsyncHTTPClient's DNS override; TLS still verifies the certificate for the host name). Redirects
/// are not followed; the whole attempt has a deadline; at most 64 KiB of the answer is read.
final class WebhookPoster: Sendable {
    let policy: DestinationPolicy
    let resolve: @Sendable (String) async throws -> [IPAddress]
    let timeout: Duration
    let connectionsPerHost: Int
    static let maximumAnswerBytes = 64 * 1024
    /// Clients by host and checked address (one connection pool each), at most ``maximumClients``.
    private let clients = NIOLockedValueBox<[String: HTTPClient]>([:])
    static let maximumClients = 64

    init(
        policy: DestinationPolicy,
        timeout: Duration = .seconds(15),
        connectionsPerHost: Int = 4,
        resolve: @escaping @Sendable (String) async throws -> [IPAddress] = WebhookPoster.systemResolve
    ) {
        self.policy = policy
        self.timeout = timeout
        self.connectionsPerHost = connectionsPerHost
        self.resolve = resolve
    }

    /// Posts, answering what happened; never throws.
    func post(_ request: WebhookPost) async -> WebhookPostResult {
        let timeout = self.timeout
        do {
            return try await withThrowingTaskGroup(of: WebhookPostResult?.self) { group in
                group.addTask { try await self.attempt(request) }
                group.addTask {
                    try await Task.sleep(for: timeout)
                    return nil
                }
                defer { group.cancelAll() }
                guard let first = try await group.next(), let result = first else {
                    return .failed("no answer within \(timeout.components.seconds) s")
                }
                return result
            }
        } catch let error as HTTPClientError {
            return .failed(Self.describe(error))
        } catch let error as HTTPParserError {
            return .failed("the answer is not HTTP: \(error)")
        } catch {
            return .failed("connection failed: \(Self.shortDescription(error))")
        }
    }

    private func attempt(_ request: WebhookPost) async throws -> WebhookPostResult {
        let url = request.url
        let addresses: [IPAddress]
        if let literal = url.hostAddress {
            addresses = [literal]
        } else {
            do {
                addresses = try await self.resolve(url.host)
            } catch {
                return .failed("\(url.host) does not resolve: \(Self.shortDescription(error))")
            }
        }
        guard let chosen = addresses.first else { return .failed("\(url.host) does not resolve") }
        for address in addresses {
            if let refusal = self.policy.refusal(for: address) {
                return .failed("refused: \(url.host) resolves to \(refusal)")
            }
        }
        let client = self.client(host: url.host, address: chosen, literal: url.hostAddress != nil)
        var http = HTTPClientRequest(url: url.value)
        http.method = .POST
        for (name, value) in request.headers { http.headers.add(name: name, value: value) }
        http.body = .bytes(ByteBuffer(bytes: request.body))
        let response = try await client.execute(http, timeout: .seconds(self.timeout.components.seconds))
        var read = 0
        for try await chunk in response.body {
            read += chunk.readableBytes
            if read >= Self.maximumAnswerBytes { break }
        }
        return .answered(status: Int(response.status.code))
    }

    private func client(host: String, address: IPAddress, literal: Bool) -> HTTPClient {
        let key = "\(host)|\(address)"
        return self.clients.withLockedValue { clients in
            if let client = clients[key] { return client }
            if clients.count >= Self.maximumClients, let (oldKey, old) = clients.first {
                clients[oldKey] = nil
                old.shutdown { _ in }
            }
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: .init(connect: .seconds(5), read: .seconds(self.timeout.components.seconds))
            )
            if !literal { configuration.dnsOverride = [host: address.description] }
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: self.connectionsPerHost)
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            clients[key] = client
            return client
        }
    }

    /// Closes every connection.
    func shutdown() async {
        let all = self.clients.withLockedValue { clients in
            defer { clients.removeAll() }
            return Array(clients.values)
        }
        for client in all { try? await client.shutdown() }
    }

    static func describe(_ error: HTTPClientError) -> String {
        switch error {
        case .connectTimeout: "connection timed out"
        case .readTimeout, .deadlineExceeded: "no answer in time"
        case .remoteConnectionClosed: "the receiver closed the connection"
        default: "HTTP error: \(Self.shortDescription(error))"
        }
    }

    /// An error's description cut to 200 characters (it goes to the delivery history).
    static func shortDescription(_ error: any Error) -> String {
        String(String(describing: error).prefix(200))
    }

    /// The host's addresses from the system resolver (getaddrinfo on a thread of NIO's pool).
    @Sendable static func systemResolve(_ host: String) async throws -> [IPAddress] {
        try await NIOThreadPool.singleton.runIfActive {
            var hints = addrinfo()
            #if canImport(Darwin)
            hints.ai_socktype = SOCK_STREAM
            #else
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
            #endif
            var list: UnsafeMutablePointer<addrinfo>?
            let status = getaddrinfo(host, nil, &hints, &list)
            guard status == 0 else { throw ResolutionError(message: String(cString: gai_strerror(status))) }
            defer { freeaddrinfo(list) }
            var addresses: [IPAddress] = []
            var next = list
            while let entry = next {
                if let socket = entry.pointee.ai_addr {
                    switch entry.pointee.ai_family {
                    case AF_INET:
                        let bytes = socket.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                            withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                        }
                        if let address = IPAddress(bytes: bytes), !addresses.contains(address) { addresses.append(address) }
                    case AF_INET6:
                        let bytes = socket.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                            withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                        }
                        if let address = IPAddress(bytes: bytes), !addresses.contains(address) { addresses.append(address) }
                    default:
                        break
                    }
                }
                next = entry.pointee.ai_next
            }
            return addresses
        }
    }

    struct ResolutionError: Error, CustomStringConvertible {
        var message: String
        var description: String { self.message }
    }
}
