public import Foundation
public import Hummingbird
public import HummingbirdTesting

/// A response with its JSON body parsed.
public struct JSONTestResponse: Sendable {
    public var status: HTTPResponse.Status
    public var headers: HTTPFields
    public var body: Data

    /// The body as a JSON object (empty when it is not one).
    public var json: [String: Any] {
        ((try? JSONSerialization.jsonObject(with: self.body)) as? [String: Any]) ?? [:]
    }

    /// `error.code` of an error response.
    public var errorCode: String? { (self.json["error"] as? [String: Any])?["code"] as? String }

    /// A nested string value by key path, e.g. `value("session", "token")`.
    public func value(_ path: String...) -> String? { self.any(path) as? String }

    public func any(_ path: [String]) -> Any? {
        var current: Any? = self.json
        for key in path { current = (current as? [String: Any])?[key] }
        return current
    }

    public func decode<T: Decodable>(_ type: T.Type) throws -> T { try JSONDecoder().decode(T.self, from: self.body) }
}

extension TestClientProtocol {
    /// Sends `body` (a JSON-serialisable dictionary, or raw text) and returns the parsed response.
    public func request(
        _ method: HTTPRequest.Method,
        _ uri: String,
        token: String? = nil,
        json: [String: any Sendable]? = nil,
        raw: String? = nil,
        headers extraHeaders: HTTPFields = [:]
    ) async throws -> JSONTestResponse {
        var headers = extraHeaders
        if let token { headers[.authorization] = "Bearer \(token)" }
        var buffer: ByteBuffer?
        if let json {
            headers[.contentType] = "application/json"
            buffer = ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: json))
        } else if let raw {
            if headers[.contentType] == nil { headers[.contentType] = "application/json" }
            buffer = ByteBuffer(string: raw)
        }
        let response = try await self.executeRequest(uri: uri, method: method, headers: headers, body: buffer)
        return JSONTestResponse(status: response.status, headers: response.headers, body: Data(response.body.readableBytesView))
    }
}
