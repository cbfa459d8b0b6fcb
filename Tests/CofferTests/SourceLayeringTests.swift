import CofferTestSupport
import Foundation
import XCTest

/// `Tools/check-layers.py` (the DocC article "Architecture"): modules import only what their table allows, and the
/// folders inside a module depend downward only.
final class SourceLayeringTests: XCTestCase {
    /// The package root: three levels above this file (Tests/CofferTests/…).
    private let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    private func checkLayers(_ packageRoot: String) throws -> Shell.Result {
        try Shell.run("/usr/bin/env", ["python3", root + "/Tools/check-layers.py", packageRoot])
    }

    func testSourcesDependDownwardOnly() throws {
        let result = try checkLayers(root)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
    }

    /// A package whose lowest folder names a type of a higher one, whose module imports what its table
    /// does not allow, and which adds a module the table does not know, fails with each violation named.
    func testUpwardReferencesAreReported() throws {
        let directory = try TemporaryDirectory("coffer-layers")
        let sources = directory.url.appendingPathComponent("Sources/CofferEngine")
        for folder in ["Core", "Connection"] {
            try FileManager.default.createDirectory(
                at: sources.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try #"""
        // swift-tools-version: 6.0
        import PackageDescription
        let package = Package(name: "Coffer", targets: [.target(name: "CofferEngine"), .target(name: "CofferNew")])
        """#.write(toFile: directory.path("Package.swift"), atomically: true, encoding: .utf8)
        try "import CofferRepair\n\nstruct Settings { let link: Link }\n"
            .write(to: sources.appendingPathComponent("Core/Settings.swift"), atomically: true, encoding: .utf8)
        try "/// Not `Settings` (a comment names no dependency).\nstruct Link {}\n"
            .write(to: sources.appendingPathComponent("Connection/Link.swift"), atomically: true, encoding: .utf8)

        let result = try checkLayers(directory.url.path)
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("Core/Settings.swift:1: CofferEngine imports CofferRepair"), result.stdout)
        XCTAssertTrue(result.stdout.contains("Core/Settings.swift:3: Core uses Link from Connection"), result.stdout)
        XCTAssertFalse(result.stdout.contains("Link.swift"), result.stdout)
        XCTAssertTrue(result.stdout.contains("CofferNew: not in MAY_IMPORT"), result.stdout)
    }

    /// A member that an extension in a higher folder adds to a lower type (`extension Connection { var
    /// tracker … }` in Pool) is that folder's: a lower folder that names it depends upward, though no type
    /// of the higher folder appears. A name the lower folder declares itself is its own.
    func testMembersAddedByExtensionsAreReported() throws {
        let directory = try TemporaryDirectory("coffer-layers-members")
        let sources = directory.url.appendingPathComponent("Sources/CofferEngine")
        for folder in ["Connection", "Pool"] {
            try FileManager.default.createDirectory(
                at: sources.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try #"""
        // swift-tools-version: 6.0
        import PackageDescription
        let package = Package(name: "Coffer", targets: [.target(name: "CofferEngine")])
        """#.write(toFile: directory.path("Package.swift"), atomically: true, encoding: .utf8)
        try "final class Connection {\n    func close() { pageTracker.reset() }\n    func open(mode: Int) { _ = mode }\n}\n"
            .write(to: sources.appendingPathComponent("Connection/Connection.swift"), atomically: true, encoding: .utf8)
        try
            ("extension Connection {\n    var pageTracker: Tracker { Tracker() }\n    func mode() -> Int { 0 }\n}\n"
            + "struct Tracker { func reset() {} }\n")
            .write(to: sources.appendingPathComponent("Pool/Connection+Tracker.swift"), atomically: true, encoding: .utf8)

        let result = try checkLayers(directory.url.path)
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertTrue(
            result.stdout.contains("Connection/Connection.swift:2: Connection uses pageTracker from Pool"), result.stdout)
        XCTAssertFalse(result.stdout.contains("uses mode from Pool"), result.stdout)
    }

    /// CofferRepair's folders are checked too, and a file at its root may only import (the re-export of
    /// CofferFormat): one that declares a type is reported.
    func testCofferRepairFoldersAndRootFilesAreChecked() throws {
        let directory = try TemporaryDirectory("coffer-layers-repair")
        let sources = directory.url.appendingPathComponent("Sources/CofferRepair")
        for folder in ["SchemaText", "Salvage"] {
            try FileManager.default.createDirectory(
                at: sources.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        try #"""
        // swift-tools-version: 6.0
        import PackageDescription
        let package = Package(name: "Coffer", targets: [.target(name: "CofferRepair")])
        """#.write(toFile: directory.path("Package.swift"), atomically: true, encoding: .utf8)
        try "@_exported import CofferFormat\n"
            .write(to: sources.appendingPathComponent("FormatExports.swift"), atomically: true, encoding: .utf8)
        try "struct Loose {}\n".write(to: sources.appendingPathComponent("Loose.swift"), atomically: true, encoding: .utf8)
        try "struct Schema { let sink: Sink }\n"
            .write(to: sources.appendingPathComponent("SchemaText/Schema.swift"), atomically: true, encoding: .utf8)
        try "struct Sink { let schema: Schema }\n"
            .write(to: sources.appendingPathComponent("Salvage/Sink.swift"), atomically: true, encoding: .utf8)

        let result = try checkLayers(directory.url.path)
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("Sources/CofferRepair/Loose.swift: outside every folder"), result.stdout)
        XCTAssertFalse(result.stdout.contains("FormatExports.swift"), result.stdout)
        XCTAssertTrue(result.stdout.contains("SchemaText/Schema.swift:1: SchemaText uses Sink from Salvage"), result.stdout)
        XCTAssertFalse(result.stdout.contains("Salvage/Sink.swift"), result.stdout)
    }
}
