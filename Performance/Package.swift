// swift-tools-version: 6.1
// Micro-benchmarks (ordo-one/benchmark): the verification paths and the store, with allocation counts. A package of
// its own so that CI, which builds the main package, never builds or runs them; they report, they never gate.
//
//     cd Performance && swift package benchmark                      # every benchmark
//     cd Performance && swift package benchmark --filter "WebAuthn"  # some
import PackageDescription

let package = Package(
    name: "TouchstoneBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "touchstone", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Verification",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "TouchstoneCrypto", package: "touchstone"),
                .product(name: "TouchstoneWebAuthn", package: "touchstone"),
            ],
            path: "Benchmarks/Verification",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Store",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "TouchstoneStore", package: "touchstone"),
            ],
            path: "Benchmarks/Store",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
