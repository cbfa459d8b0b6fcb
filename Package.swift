// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Coffer",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "Coffer", targets: ["Coffer"]),
        .library(name: "CofferRepair", targets: ["CofferRepair"]),
        .executable(name: "coffer", targets: ["coffer"]),
        .executable(name: "coffer-corrupt", targets: ["coffer-corrupt"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", exact: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLCipher",
            pkgConfig: "sqlcipher",
            providers: [.apt(["libsqlcipher-dev"])]
        ),
        .target(
            name: "Coffer",
            dependencies: [
                "CSQLCipher",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "CofferRepair",
            dependencies: [
                "Coffer",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "coffer",
            dependencies: [
                "Coffer",
                "CofferRepair",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(name: "CofferCorruption", dependencies: ["CofferRepair"]),
        .executableTarget(
            name: "coffer-corrupt",
            dependencies: [
                "CofferCorruption",
                "CofferRepair",
                "Coffer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tools/coffer-corrupt",
            exclude: ["README.md"]
        ),
        .target(name: "CofferTestSupport", path: "Tests/CofferTestSupport"),
        .testTarget(name: "CofferTests", dependencies: ["Coffer", "CofferTestSupport"]),
        .testTarget(name: "CofferCLITests", dependencies: ["coffer", "Coffer", "CofferTestSupport"]),
        .testTarget(name: "CofferRepairTests", dependencies: ["CofferRepair", "Coffer"]),
        .testTarget(
            name: "CofferCorruptionTests",
            dependencies: ["CofferCorruption", "CofferRepair", "Coffer", "CSQLCipher", "CofferTestSupport", "coffer-corrupt"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
