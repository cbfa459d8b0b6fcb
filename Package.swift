// swift-tools-version: 6.0
import CompilerPluginSupport
import PackageDescription

// The SQLCipher to build against, by pkg-config name: Debian's `sqlcipher` (3.4.1) unless
// COFFER_SQLCIPHER_PKGCONFIG names another, e.g. `sqlcipher4` (Tools/test-sqlcipher4.sh). Chosen by name
// because SwiftPM reads the system's `sqlcipher.pc` before PKG_CONFIG_PATH's. The library is linked from
// what that .pc's Libs name (the module map and the C targets link nothing themselves), so exactly one
// SQLCipher ends up in a process.
let sqlcipherPkgConfig = Context.environment["COFFER_SQLCIPHER_PKGCONFIG"] ?? "sqlcipher"

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
        .package(url: "https://github.com/apple/swift-atomics", exact: "1.3.0"),
        .package(url: "https://github.com/apple/swift-metrics", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", exact: "1.7.3"),
        // The README's metrics example and coffer-bench's `--monitoring metrics` run against a real backend.
        .package(url: "https://github.com/swift-server/swift-prometheus", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto", exact: "3.12.3"),
        .package(url: "https://github.com/swiftlang/swift-syntax", exact: "600.0.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLCipher",
            pkgConfig: sqlcipherPkgConfig,
            providers: [.apt(["libsqlcipher-dev"])]
        ),
        .macro(
            name: "CofferMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]
        ),
        // The on-disk format, without SQLite: SQLCipher 1–4 and plaintext page codecs, B-tree pages and cells,
        // records and varints, WAL frames and checksums. Backup, verify, repair, migrate and the fuzzers use it.
        .target(
            name: "CofferFormat",
            dependencies: [
                "COpenSSL",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The engine: connections and statements, keys and cipher settings, the writer queue and reader pool,
        // observation plumbing, monitoring. Everything above it reaches SQLite through it.
        .target(
            name: "CofferEngine",
            dependencies: [
                "CofferFormat",
                "CSQLCipher",
                "CofferVFS",
                "CofferPageCache",
                "CofferTokenizer",
                "CZstd",
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // Typed tables and what is built on them: @Table records, queries, associations, migrations,
        // observation of queries, the record cache.
        .target(name: "CofferRecords", dependencies: ["CofferEngine", "CSQLCipher", "CofferMacros"]),
        // Full-text indexes of records (the CJK, pinyin and identifier tokenizers) and schema upgrades, which
        // create tables, indexes and then full-text indexes.
        .target(name: "CofferSearch", dependencies: ["CofferEngine", "CofferRecords", "CSQLCipher", "CofferTokenizer"]),
        // The key-value, document and settings stores, on records and their search.
        .target(name: "CofferStores", dependencies: ["CofferEngine", "CofferRecords", "CofferSearch"]),
        // Page-level backups, restore, verify, vacuum and file inspection.
        .target(
            name: "CofferBackup",
            dependencies: [
                "CofferEngine", "CofferRecords", "CofferFormat", "CSQLCipher",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The umbrella: `import Coffer` re-exports the five layers above.
        .target(name: "Coffer", dependencies: ["CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup"]),
        // zstd (Debian's libzstd-dev) for compressed columns: the codec and its dictionary trainer.
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "CofferRepair",
            dependencies: ["Coffer", "CofferFormat", .product(name: "Crypto", package: "swift-crypto")]
        ),
        .executableTarget(
            name: "coffer",
            dependencies: [
                "Coffer",
                "CofferRepair",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "coffer-bench",
            dependencies: [
                "Coffer",
                "CofferTestSupport",
                "CSQLCipher",
                "CofferTokenizer",
                "COpenSSL",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Tools/coffer-bench"
        ),
        // The damage injector of the corruption tests and `coffer-corrupt`: test tooling, kept under Tools/ with
        // the injector's command (its randomness is CofferTestSupport's SeededGenerator); nothing ships it.
        .target(
            name: "CofferCorruption", dependencies: ["CofferFormat", "CofferRepair", "CofferTestSupport"],
            path: "Tools/CofferCorruption"),
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
        // Coffer's VFSes: "coffer" (a commit's WAL frames in one write) and, over it, SQLite's temporary
        // files encrypted (`TemporaryStorage.encryptedFiles`): C, against SQLCipher's header and OpenSSL's
        // libcrypto.
        .target(
            name: "CofferVFS", dependencies: ["CSQLCipher", "COpenSSL"],
            linkerSettings: [.linkedLibrary("crypto")]),
        // The decrypted-page cache shared by encrypted connections (`DecryptedPageCache`) and the page
        // crypto behind it: C, against SQLCipher's header and library and OpenSSL's libcrypto.
        .target(
            name: "CofferPageCache", dependencies: ["CSQLCipher", "COpenSSL"],
            linkerSettings: [.linkedLibrary("crypto")]),
        // Full-text search (`FullTextIndex`): the CJK-aware FTS3/4 tokenizer `coffer` and `coffer_bm25`, C
        // against SQLCipher's header and library only.
        .target(
            name: "CofferTokenizer", dependencies: ["CSQLCipher"],
            linkerSettings: [.linkedLibrary("m")]),
        .target(
            name: "CofferTestSupport",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"), .product(name: "InMemoryLogging", package: "swift-log"),
            ],
            path: "Tests/CofferTestSupport"),
        // The power-loss tests' crash VFS: C, against SQLCipher's header and library only.
        .target(
            name: "CofferTestVFS", dependencies: ["CSQLCipher"], path: "Tests/CofferTestVFS"),
        // The crash tests' child process (KillTests, FullDiskTests): test-only, never shipped.
        .executableTarget(
            name: "coffer-torture",
            dependencies: [
                "Coffer", "CofferTestSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Tests/CofferTorture"
        ),
        .testTarget(
            name: "CofferTests",
            dependencies: [
                "Coffer", "CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup", "CofferTestSupport",
                "CofferVFS",
            ]),
        .testTarget(name: "CofferCLITests", dependencies: ["coffer", "Coffer", "CofferTestSupport"]),
        .testTarget(
            name: "CofferQueryTests",
            dependencies: [
                "Coffer", "CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup", "CofferTestSupport",
                .product(name: "InMemoryLogging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "CofferRepairTests", dependencies: ["CofferFormat", "CofferRepair", "Coffer", "CofferTestSupport"]),
        .testTarget(
            name: "CofferKeyValueTests",
            dependencies: [
                "Coffer", "CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup", "CofferTestSupport",
            ]),
        // Traces and metrics (`Monitoring`) against swift-metrics' and swift-distributed-tracing's own test
        // backends, and the README's Prometheus example.
        .testTarget(
            name: "CofferMonitoringTests",
            dependencies: [
                "Coffer", "CofferEngine", "CofferRecords", "CofferSearch", "CofferStores", "CofferBackup", "CofferTestSupport",
                .product(name: "InMemoryLogging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ]
        ),
        .testTarget(
            name: "CofferBackupTests",
            dependencies: ["Coffer", "CofferTestSupport", "CofferTestVFS", "coffer", "coffer-torture"]
        ),
        .testTarget(
            name: "CofferReliabilityTests",
            dependencies: ["CofferRepair", "Coffer", "CofferTestSupport", "CofferTestVFS", "coffer", "coffer-torture"]
        ),
        // Coffer as a user sees it: only the public API the README and DocC teach (no @testable, no SPI),
        // on real files, threads and processes. `coffer` is listed only so that its binary is built.
        .testTarget(name: "CofferPublicAPITests", dependencies: ["Coffer", "CofferTestSupport", "coffer"]),
        // Every ```swift block of the DocC articles, verbatim, compiled and run (ArticleSnippetsAreCompiledTests
        // keeps the articles and these files in step).
        .testTarget(name: "CofferDocumentationTests", dependencies: ["Coffer", "CofferRepair", "CofferTestSupport"]),
        .testTarget(
            name: "CofferCorruptionTests",
            dependencies: ["CofferCorruption", "CofferRepair", "Coffer", "CSQLCipher", "CofferTestSupport", "coffer-corrupt"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
