import SwiftUI

@main
struct TouchstoneDemoApp: App {
    var body: some Scene {
        WindowGroup {
            ContentView(model: SignInModel(serverURL: URL(string: "https://auth.example.com")!))
        }
    }
}
