public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// One HTTP exchange with the Touchstone server.
public struct TransportRequest: Sendable, Hashable {
    public var method: String
    /// Path and query, starting with `/`.
    public var path: String
    public var headers: [String: String]
    public var body: Data?

    public init(method: String, path: String, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.path = path
        self.headers = headers
        self.body = body
    }
}

public struct TransportResponse: Sendable, Hashable {
    public var status: Int
    public var body: Data
    /// Response headers the SDK reads (`DPoP-Nonce`); names as the transport got them.
    public var headers: [String: String]

    public init(status: Int, body: Data, headers: [String: String] = [:]) {
        self.status = status
        self.body = body
        self.headers = headers
    }

    /// A header's value, its name compared without case.
    public func header(_ name: String) -> String? {
        self.headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
    }
}

/// Sends requests to the server. Swap it to add certificate pinning, logging or a mock.
public protocol TouchstoneTransport: Sendable {
    /// - Throws: any error when no HTTP response was received; the client reports it as `.transport`.
    func send(_ request: TransportRequest) async throws -> TransportResponse
    /// The server's URL, when the transport knows it: a scanned sign-in code must name the same origin.
    var serverURL: URL? { get }
}

extension TouchstoneTransport {
    public var serverURL: URL? { nil }
}

/// A transport over `URLSession` (Foundation on Apple platforms, FoundationNetworking on Linux).
public struct URLSessionTransport: TouchstoneTransport {
    public let baseURL: URL
    private let session: URLSession

    public init(baseURL: URL, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.session = session
    }

    public var serverURL: URL? { self.baseURL }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        let base = self.baseURL.absoluteString.hasSuffix("/") ? String(self.baseURL.absoluteString.dropLast()) : self.baseURL.absoluteString
        guard let url = URL(string: base + request.path) else { throw URLError(.badURL) }
        var urlRequest = URLRequest(url: url, timeoutInterval: 30)
        urlRequest.httpMethod = request.method
        urlRequest.httpBody = request.body
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        let session = self.session
        return try await withCheckedThrowingContinuation { continuation in
            let task = session.dataTask(with: urlRequest) { data, response, error in
                if let error {
                    continuation.resume(throwing: error)
                } else if let http = response as? HTTPURLResponse {
                    var headers: [String: String] = [:]
                    for (name, value) in http.allHeaderFields {
                        if let name = name as? String, let value = value as? String { headers[name] = value }
                    }
                    continuation.resume(returning: TransportResponse(status: http.statusCode, body: data ?? Data(), headers: headers))
                } else {
                    continuation.resume(throwing: URLError(.badServerResponse))
                }
            }
            task.resume()
        }
    }
}
