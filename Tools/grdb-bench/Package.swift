// swift-tools-version: 6.1
import PackageDescription

// GRDB's side of the Coffer benchmarks, in its own package: GRDB 7.10.0 links the system SQLite (it
// needs `sqlite3_prepare_v3`, which Debian's SQLCipher 3.4.1 lacks) and both libraries export
// `sqlite3_*`, so they cannot share a process with Coffer. Compare overhead ratios (layer / raw C on the
// same SQLite), never absolute times across SQLite versions.
let package = Package(
    name: "grdb-bench",
    dependencies: [
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        .executableTarget(
            name: "grdb-bench",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
