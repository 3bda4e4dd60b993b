import ArgumentParser

@main
struct Touchstone: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "touchstone",
        abstract: "Biometric login with device-bound keys: the server, and a simulated device to drive it.",
        subcommands: [Serve.self, Migrate.self, Device.self, WebAuthn.self, Bench.self, Admin.self, Clients.self, Webhooks.self, Audit.self, Keys.self, Token.self, Confirmation.self, LoadTest.self],
        defaultSubcommand: Serve.self
    )
}
