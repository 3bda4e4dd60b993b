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
                if self.model.biometricsEnabled {
                    Section("Sign-in requests") {
                        Button("Check for sign-in requests") { Task { await self.model.loadSignInRequests() } }
                        ForEach(self.model.signInRequests, id: \.requestId) { request in
                            SignInRequestView(request: request, model: self.model)
                        }
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

/// A sign-in on a computer waiting for approval: who asks, from where, and the three numbers to pick from (or, for an
/// app's backend, the message to check).
struct SignInRequestView: View {
    let request: SignInRequest
    let model: SignInModel

    var body: some View {
        VStack(alignment: .leading, spacing: 8) {
            Text("\(self.request.client) wants to sign you in").font(.headline)
            if let browser = self.request.payload.browser {
                Text("\(browser.userAgent) · \(browser.address)").font(.caption).foregroundStyle(.secondary)
            }
            if self.request.needsNumber {
                Text("Pick the number shown on your computer:")
                HStack {
                    ForEach(self.request.numbers, id: \.self) { number in
                        Button(String(number)) { Task { await self.model.approve(self.request, number: number) } }
                            .font(.title.bold())
                            .buttonStyle(.bordered)
                            .accessibilityLabel("Number \(number)")
                    }
                }
            } else {
                Text(self.request.payload.bindingMessage ?? "No message was given.")
                Button("Approve") { Task { await self.model.approve(self.request, number: nil) } }
            }
            HStack {
                Button("It wasn't me", role: .destructive) { Task { await self.model.decline(self.request, notMe: true) } }
                Button("Cancel") { Task { await self.model.decline(self.request, notMe: false) } }
            }
            .buttonStyle(.borderless)
        }
    }
}
