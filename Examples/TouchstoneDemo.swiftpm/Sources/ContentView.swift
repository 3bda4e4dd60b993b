import SwiftUI

struct ContentView: View {
    @State var model: SignInModel
    @State private var email = ""
    @State private var password = ""

    var body: some View {
        NavigationStack {
            Form {
                switch self.model.screen {
                case .signedOut(let offerBiometrics):
                    if offerBiometrics {
                        Section {
                            Button("Sign in with \(self.model.biometryName)") {
                                Task { await self.model.signInWithBiometrics() }
                            }
                        }
                    }
                    Section {
                        Button("Sign in with a passkey") { Task { await self.model.signInWithPasskey() } }
                    }
                    Section("Password") {
                        // .username makes the keyboard offer passkeys (AutoFill) while the request runs.
                        TextField("Email", text: self.$email).textContentType(.username).keyboardType(.emailAddress)
                            .textInputAutocapitalization(.never)
                            .onAppear { self.model.startPasskeyAutoFill() }
                        SecureField("Password", text: self.$password).textContentType(.password)
                        Button("Sign in") { Task { await self.model.signIn(email: self.email, password: self.password) } }
                    }
                case .signedIn(let email):
                    Section("Signed in") {
                        Text(email)
                        Toggle("Sign in with \(self.model.biometryName)", isOn: Binding(
                            get: { self.model.biometricsEnabled },
                            set: { on in Task { on ? await self.model.enableBiometrics() : await self.model.disableBiometrics() } }
                        ))
                        Button("Add a passkey") { Task { await self.model.addPasskey() } }
                        Button("Call the API") { Task { await self.model.loadProfile() } }
                        Button("Sign out", role: .destructive) { Task { await self.model.signOut() } }
                    }
                }
                if let message = self.model.message {
                    Section { Text(message).foregroundStyle(.secondary) }
                }
            }
            .disabled(self.model.busy)
            .navigationTitle("Touchstone Demo")
        }
    }
}
