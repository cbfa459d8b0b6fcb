import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Salvage throughput per SQLCipher generation (3: HMAC-SHA1; 4: HMAC-SHA512), with a counting sink.
/// Skipped unless COFFER_REPAIR_BENCH=1 and the SQLCipher 4.12 producer (`pip install sqlcipher3-binary`)
/// is installed. Run in release:
/// `COFFER_REPAIR_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter ProfileThroughputTests`
final class ProfileThroughputTests: XCTestCase {
    func testSalvageThroughputPerProfile() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["COFFER_REPAIR_BENCH"] == "1", "set COFFER_REPAIR_BENCH=1")
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tools/bench/make_profile_bench.py").path
        let dir = try TemporaryDirectory()
        let rows = 400_000
        for compat in [3, 4] {
            let path = dir.path("bench-v\(compat).db")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["python3", script, path, String(compat), String(rows)]
            try process.run()
            process.waitUntilExit()
            try XCTSkipUnless(process.terminationStatus == 0, "the SQLCipher 4.12 producer (sqlcipher3) is not installed")
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64)
            let file = try ProfileDetection.open(path: path, key: .passphrase("pw"))
            XCTAssertEqual(file.settings.name, "sqlcipher\(compat)")
            var sink = CountingSink()
            let report = try Salvager(file: file, useWAL: false).run(into: &sink)
            let megabytes = Double(size) / 1_048_576
            print(
                String(
                    format: "[throughput] sqlcipher%d: %.1f MB, %d pages, %d rows in %.2f s = %.1f MB/s",
                    compat, megabytes, report.pagesTotal, report.rowsSalvaged, report.seconds, megabytes / report.seconds))
            XCTAssertEqual(report.rowsSalvaged, rows)
            XCTAssertGreaterThan(megabytes / report.seconds, 50, "repair must not drop below 50 MB/s")
        }
    }
}
