import Foundation
import NIOConcurrencyHelpers
import Testing
import TouchstoneServer
import TouchstoneWebhooks

/// Webhooks as a receiver would get them (the server's `postWebhook` dependency): every post recorded, answered with
/// `status`.
final class WebhookTestReceiver: Sendable {
    let posts = NIOLockedValueBox<[WebhookPost]>([])
    let status = NIOLockedValueBox<Int>(200)
    let stream: AsyncStream<Void>
    let continuation: AsyncStream<Void>.Continuation

    init(status: Int = 200) {
        (self.stream, self.continuation) = AsyncStream.makeStream()
        self.status.withLockedValue { $0 = status }
    }

    var post: @Sendable (WebhookPost) async -> WebhookPostResult {
        { post in
            self.posts.withLockedValue { $0.append(post) }
            self.continuation.yield()
            return .answered(status: self.status.withLockedValue { $0 })
        }
    }

    var count: Int { self.posts.withLockedValue { $0.count } }

    /// Waits until `count` posts in all have come (the dispatcher looks every second); false when they did not
    /// within 20 seconds (a safety net against a hung test, not a timing assertion).
    @discardableResult
    func waitFor(_ count: Int) async -> Bool {
        let stream = self.stream
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var iterator = stream.makeAsyncIterator()
                while self.count < count {
                    guard await iterator.next() != nil else { return false }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: .seconds(20))
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    /// The posts' bodies as JSON objects.
    func events() throws -> [[String: Any]] {
        try self.posts.withLockedValue { $0 }.map { try #require(JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any]) }
    }

    /// The posts of one event type.
    func posts(ofType type: String) throws -> [WebhookPost] {
        try self.posts.withLockedValue { $0 }.filter {
            (try JSONSerialization.jsonObject(with: Data($0.body)) as? [String: Any])?["type"] as? String == type
        }
    }
}
