public import Foundation
public import HummingbirdTesting
public import TouchstoneKit
import Hummingbird
import HTTPTypes

/// Routes the SDK's requests into a Hummingbird test client, so SDK tests run against the real server in process.
public struct TestClientTransport: TouchstoneTransport {
    let client: any TestClientProtocol
    /// The server's URL as the SDK should believe it (a scanned sign-in code must name it).
    public let serverURL: URL?

    public init(_ client: any TestClientProtocol, serverURL: URL? = nil) {
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
        return TransportResponse(status: Int(response.status.code), body: Data(response.body.readableBytesView))
    }
}
