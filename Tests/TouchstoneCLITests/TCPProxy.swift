import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A loopback TCP relay that can be switched off and on again, to cut a server off from its database without stopping
/// the database (other tests share it).
final class TCPProxy: Sendable {
    private let upstreamHost: String
    private let upstreamPort: Int
    private let group = MultiThreadedEventLoopGroup.singleton
    private let state = NIOLockedValueBox(State())

    private struct State {
        var port = 0
        var listener: (any Channel)?
        var connections: [any Channel] = []
    }

    var port: Int { self.state.withLockedValue { $0.port } }

    init(upstreamHost: String, upstreamPort: Int) {
        self.upstreamHost = upstreamHost
        self.upstreamPort = upstreamPort
    }

    /// Listens (on the same port as before after a stop).
    func start() async throws {
        let port = self.state.withLockedValue { $0.port }
        let listener = try await ServerBootstrap(group: self.group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.autoRead, value: false)
            .childChannelInitializer { [self] inbound in
                self.track(inbound)
                return ClientBootstrap(group: inbound.eventLoop)
                    .connect(host: self.upstreamHost, port: self.upstreamPort)
                    .flatMap { outbound in
                        self.track(outbound)
                        return inbound.pipeline.addHandler(Relay(partner: outbound)).flatMap {
                            outbound.pipeline.addHandler(Relay(partner: inbound))
                        }.flatMap {
                            inbound.setOption(.autoRead, value: true)
                        }
                    }
            }
            .bind(host: "127.0.0.1", port: port)
            .get()
        self.state.withLockedValue {
            $0.listener = listener
            $0.port = listener.localAddress?.port ?? port
        }
    }

    /// Stops listening and drops every relayed connection.
    func stop() async throws {
        let (listener, connections) = self.state.withLockedValue { state in
            defer {
                state.listener = nil
                state.connections = []
            }
            return (state.listener, state.connections)
        }
        try? await listener?.close()
        for connection in connections { try? await connection.close() }
    }

    private func track(_ channel: any Channel) {
        self.state.withLockedValue { $0.connections.append(channel) }
    }

    /// Copies bytes to the partner channel and closes it when this side closes.
    private final class Relay: ChannelInboundHandler, @unchecked Sendable {
        typealias InboundIn = ByteBuffer
        let partner: any Channel

        init(partner: any Channel) { self.partner = partner }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            // Database traffic in tests is small: no back-pressure needed.
            self.partner.writeAndFlush(self.unwrapInboundIn(data), promise: nil)
        }

        func channelInactive(context: ChannelHandlerContext) {
            self.partner.close(promise: nil)
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            context.close(promise: nil)
        }
    }
}
