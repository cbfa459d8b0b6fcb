import CofferCorruption
import CofferTestSupport
import Foundation
import XCTest

/// The `coffer-corrupt` executable: its CLI contract, JSON output, determinism and failures.
final class CorruptToolTests: XCTestCase {
    private var tool: String { Shell.productsDirectory.appendingPathComponent("coffer-corrupt").path }

    private func makeDatabase(_ directory: TemporaryDirectory, passphrase: String?) throws -> String {
        let path = directory.path(passphrase == nil ? "plain.db" : "encrypted.db")
        let result = try Shell.sqlcipher(
            path, passphrase: passphrase, pageSize: 1024,
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
            INSERT INTO t(body) SELECT printf('row %d %s', i, hex(zeroblob(i % 40))) FROM n;
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        return path
    }

    func testASQLCipher4InputIsReadWithCipherCompat4() throws {
        try XCTSkipUnless(ChatFixture.canMakeSQLCipher4, "python3 -m pip install sqlcipher3-binary")
        let directory = try TemporaryDirectory("coffer-corrupt-cli")
        let input = directory.path("v4.db")
        let make = try Shell.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                """
                import sqlcipher3, sys
                c = sqlcipher3.connect(sys.argv[1]); c.execute("PRAGMA key = 'v4 pw'")
                c.executescript("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000) INSERT INTO t(body) SELECT printf('row %d %s', i, hex(zeroblob(i % 40))) FROM n;")
                c.close()
                """, input,
            ])
        XCTAssertEqual(make.status, 0, make.stderr)
        let keyFile = directory.path("key")
        try Data("v4 pw\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        let arguments = [
            input, "--output", directory.path("out.db"), "--kind", "zero-interior", "--seed", "5", "--passphrase-file", keyFile,
            "--json",
        ]
        XCTAssertNotEqual(try Shell.run(tool, arguments).status, 0, "SQLCipher 3 settings do not open a SQLCipher 4 file")
        let result = try Shell.run(tool, arguments + ["--cipher-compat", "4"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let report = try JSONDecoder().decode(DamageReport.self, from: Data(result.stdout.utf8))
        XCTAssertEqual(report.pages.map(\.role), ["tableInterior"])
        XCTAssertEqual(report.pageSize, 4096)
    }

    func testJSONNamesTouchedPagesWithTheirPristineRoles() throws {
        let directory = try TemporaryDirectory("coffer-corrupt-cli")
        let input = try makeDatabase(directory, passphrase: "tool pw")
        let keyFile = directory.path("key")
        try Data("tool pw\n".utf8).write(to: URL(fileURLWithPath: keyFile))
        let output = directory.path("out.db")
        let result = try Shell.run(
            tool,
            [
                input, "--output", output, "--kind", "zero-interior", "--seed", "5",
                "--passphrase-file", keyFile, "--json",
            ])
        XCTAssertEqual(result.status, 0, result.stderr)
        let report = try JSONDecoder().decode(DamageReport.self, from: Data(result.stdout.utf8))
        XCTAssertEqual(report.kind, .zeroInterior)
        XCTAssertEqual(report.seed, 5)
        XCTAssertEqual(report.pages.map(\.role), ["tableInterior"])
        XCTAssertEqual(report.pages.first?.owner, "t")
        XCTAssertTrue(report.encrypted)
        XCTAssertEqual(report.pageSize, 1024)
        let page = try XCTUnwrap(report.pages.first).page
        let bytes = try Data(contentsOf: URL(fileURLWithPath: output))
        let original = try Data(contentsOf: URL(fileURLWithPath: input))
        XCTAssertEqual(bytes.count, original.count)
        let start = Int(page - 1) * 1024
        XCTAssertTrue(bytes[start..<(start + 1024)].allSatisfy { $0 == 0 })
        var expected = original
        expected.replaceSubrange(start..<(start + 1024), with: [UInt8](repeating: 0, count: 1024))
        XCTAssertEqual(bytes, expected, "nothing but the reported page changed")
        XCTAssertTrue(result.stdout.contains("\"pages\":[{"), "one object with a pages array")
    }

    func testSameSeedGivesTheSameBytes() throws {
        let directory = try TemporaryDirectory("coffer-corrupt-cli")
        let input = try makeDatabase(directory, passphrase: nil)
        var outputs: [Data] = []
        for (index, seed) in ["9", "9", "10"].enumerated() {
            let output = directory.path("out\(index).db")
            let result = try Shell.run(tool, [input, "--output", output, "--kind", "garbage-run", "--seed", seed])
            XCTAssertEqual(result.status, 0, result.stderr)
            XCTAssertTrue(result.stdout.hasPrefix("garbage-run seed \(seed):"), result.stdout)
            outputs.append(try Data(contentsOf: URL(fileURLWithPath: output)))
        }
        XCTAssertEqual(outputs[0], outputs[1])
        XCTAssertNotEqual(outputs[0], outputs[2])
    }

    func testTruncationAndCountAreReported() throws {
        let directory = try TemporaryDirectory("coffer-corrupt-cli")
        let input = try makeDatabase(directory, passphrase: nil)
        let inputSize = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: input)[.size] as? NSNumber).uint64Value
        for seed in 1...4 {
            let output = directory.path("cut\(seed).db")
            let result = try Shell.run(tool, [input, "--output", output, "--kind", "truncate", "--seed", "\(seed)", "--json"])
            XCTAssertEqual(result.status, 0, result.stderr)
            let report = try JSONDecoder().decode(DamageReport.self, from: Data(result.stdout.utf8))
            let size = try XCTUnwrap(report.truncatedTo)
            XCTAssertEqual(
                try XCTUnwrap(FileManager.default.attributesOfItem(atPath: output)[.size] as? NSNumber).uint64Value, size)
            XCTAssertLessThan(size, inputSize)
            let firstCut = UInt32(size / UInt64(report.pageSize)) + 1
            XCTAssertLessThanOrEqual(firstCut, report.pageCount)
            XCTAssertEqual(report.pages.map(\.page), Array(firstCut..<(report.pageCount + 1)), "every cut page listed")
        }
        let flips = try Shell.run(
            tool,
            [
                input, "--output", directory.path("flip.db"), "--kind", "flip-bytes", "--seed", "3",
                "--count", "5", "--json",
            ])
        XCTAssertEqual(try JSONDecoder().decode(DamageReport.self, from: Data(flips.stdout.utf8)).pages.count, 5)
    }

    func testFailuresExitNonZeroWithAReason() throws {
        let directory = try TemporaryDirectory("coffer-corrupt-cli")
        let input = try makeDatabase(directory, passphrase: nil)
        let noFreelist = try Shell.run(
            tool, [input, "--output", directory.path("o.db"), "--kind", "damage-freelist-trunk", "--seed", "1"])
        XCTAssertEqual(noFreelist.status, 1)
        XCTAssertTrue(noFreelist.stderr.contains("no freelist trunk"), noFreelist.stderr)
        let badKind = try Shell.run(tool, [input, "--output", directory.path("o.db"), "--kind", "melt", "--seed", "1"])
        XCTAssertEqual(badKind.status, 64)
        let missing = try Shell.run(
            tool, [directory.path("none.db"), "--output", directory.path("o.db"), "--kind", "truncate", "--seed", "1"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.stderr.contains("cannot open input"), missing.stderr)
    }
}
