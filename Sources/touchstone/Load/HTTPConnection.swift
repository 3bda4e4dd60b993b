import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import TouchstoneKit

/// One keep-alive HTTP/1.1 connection, used by one simulated device for all its requests.
///
/// The load generator shares the machine with the server, so its client must be cheap: a single NIO channel per device
/// with a queue of response promises, nothing else. Requests on one connection are answered in order (HTTP/1.1), which
/// is all a device that waits for each answer needs.
final class HTTPConnection: TouchstoneTransport, @unchecked Sendable {
    private let channel: any Channel
    private let handler: ResponseHandler
    private let host: String

    private init(channel: any Channel, handler: ResponseHandler, host: String) {
        self.channel = channel
        self.handler = handler
        self.host = host
    }

    /// Connects to `host:port` on `group`.
    static func connect(host: String, port: Int, group: any EventLoopGroup) async throws -> HTTPConnection {
        let handler = ResponseHandler()
        let channel = try await ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(handler)
                }
            }
            .connect(host: host, port: port)
            .get()
        return HTTPConnection(channel: channel, handler: handler, host: "\(host):\(port)")
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let response = try await self.exchange(request)
        return TransportResponse(status: response.status, body: response.body)
    }

    /// A response with its headers (the OpenID benchmark follows `Location`).
    struct RawResponse: Sendable {
        var status: Int
        var headers: HTTPHeaders
        var body: Data
    }

    func exchange(_ request: TransportRequest) async throws -> RawResponse {
        let body = request.body.map { ByteBuffer(bytes: $0) }
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: self.host)
        for (name, value) in request.headers { headers.add(name: name, value: value) }
        headers.add(name: "Content-Length", value: String(body?.readableBytes ?? 0))
        let head = HTTPRequestHead(version: .http1_1, method: HTTPMethod(rawValue: request.method), uri: request.path, headers: headers)
        let promise = self.channel.eventLoop.makePromise(of: RawResponse.self)
        let handler = self.handler
        let channel = self.channel
        self.channel.eventLoop.execute {
            handler.enqueue(promise)
            channel.write(HTTPClientRequestPart.head(head), promise: nil)
            if let body { channel.write(HTTPClientRequestPart.body(.byteBuffer(body)), promise: nil) }
            channel.writeAndFlush(HTTPClientRequestPart.end(nil)).whenFailure { promise.fail($0) }
        }
        return try await promise.futureResult.get()
    }

    func close() async {
        try? await self.channel.close()
    }

    /// Matches responses to the promises of the requests in the order they were sent.
    private final class ResponseHandler: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = HTTPClientResponsePart

        private var waiting: CircularBuffer<EventLoopPromise<RawResponse>> = []
        private var status = 0
        private var headers = HTTPHeaders()
        private var body = ByteBuffer()

        func enqueue(_ promise: EventLoopPromise<RawResponse>) {
            self.waiting.append(promise)
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch Self.unwrapInboundIn(data) {
            case .head(let head):
                self.status = Int(head.status.code)
                self.headers = head.headers
                self.body.clear()
            case .body(var part):
                self.body.writeBuffer(&part)
            case .end:
                guard let promise = self.waiting.popFirst() else { return }
                promise.succeed(RawResponse(status: self.status, headers: self.headers, body: Data(self.body.readableBytesView)))
            }
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            self.failAll(error)
            context.close(promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.failAll(ChannelError.ioOnClosedChannel)
            context.fireChannelInactive()
        }

        private func failAll(_ error: any Error) {
            while let promise = self.waiting.popFirst() { promise.fail(error) }
        }
    }
}
