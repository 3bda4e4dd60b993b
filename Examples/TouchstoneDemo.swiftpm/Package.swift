// swift-tools-version: 5.9
// An iOS app package: open this folder in Xcode (or Swift Playgrounds) and run it on a device with Face ID or Touch ID.
// It uses the Touchstone SDK from this repository (the package two folders up).
import AppleProductTypes
import PackageDescription

let package = Package(
    name: "TouchstoneDemo",
    platforms: [.iOS("17.0")],
    products: [
        .iOSApplication(
            name: "TouchstoneDemo",
            targets: ["TouchstoneDemo"],
            bundleIdentifier: "com.example.touchstone.demo",
            teamIdentifier: "",
            displayVersion: "1.0",
            bundleVersion: "1",
            appIcon: .placeholder(icon: .lock),
            accentColor: .presetColor(.indigo),
            supportedDeviceFamilies: [.phone, .pad],
            supportedInterfaceOrientations: [.portrait],
            capabilities: [
                // Becomes NSFaceIDUsageDescription in Info.plist.
                .faceID(purposeString: "Sign in to Touchstone Demo with Face ID.")
            ]
        )
    ],
    dependencies: [
        .package(path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "TouchstoneDemo",
            dependencies: [.product(name: "TouchstoneKit", package: "touchstone")],
            path: "Sources"
        )
    ]
)
