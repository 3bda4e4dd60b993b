public import Foundation
public import HummingbirdTesting
public import TouchstoneKit
import Hummingbird
import HTTPTypes

/// Routes the SDK's requests into a Hummingbird test client, so SDK tests run against the real server in process.
public struct TestClientTransport: TouchstoneTransport {
    let client: any TestClientProtocol
    /// The server's URL as the SDK should believe it (a scanned sign-in code must name it; DPoP proofs name it in
    /// `htu`). The default is what Hummingbird's test clients send as the host (`localhost`), which a server without
    /// `TOUCHSTONE_ISSUER` takes as its origin.
    public let serverURL: URL?

    public init(_ client: any TestClientProtocol, serverURL: URL? = URL(string: "http://localhost")) {
        self.client = client
        self.serverURL = serverURL
    }

    public func send(_ request: TransportRequest) async throws -> TransportResponse {
        var headers = HTTPFields()
        for (name, value) in request.headers {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        let response = try await self.client.executeRequest(
            uri: request.path,
            method: HTTPRequest.Method(rawValue: request.method) ?? .get,
            headers: headers,
            body: request.body.map { ByteBuffer(bytes: $0) }
        )
        var fields: [String: String] = [:]
        for field in response.headers { fields[field.name.canonicalName] = field.value }
        return TransportResponse(status: Int(response.status.code), body: Data(response.body.readableBytesView), headers: fields)
    }
}
