import TouchstoneStore

/// Tells an account's phones that a sign-in request waits for them (Apple push today). The webhook
/// `sign_in_request.created` is the other way, for backends that push through a provider of their own.
protocol PushNotifier: Sendable {
    /// Notifies the phones of `userId` that have a push token; failures are the caller's to log, never the request's.
    func announce(_ request: SignInRequestRecord, userId: String) async throws
}
