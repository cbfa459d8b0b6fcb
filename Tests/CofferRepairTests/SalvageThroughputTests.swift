import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Throughput figure, skipped unless COFFER_REPAIR_BENCH=1. Run it in release:
/// `COFFER_REPAIR_BENCH=1 swift test -c release -Xswiftc -enable-testing --filter SalvageThroughputTests`
final class SalvageThroughputTests: XCTestCase {
    func testSalvageThroughput() throws {
        try XCTSkipUnless(ProcessInfo.processInfo.environment["COFFER_REPAIR_BENCH"] == "1", "set COFFER_REPAIR_BENCH=1")
        let dir = try TemporaryDirectory()
        let path = dir.path("bench.db")
        try Shell.sqlcipher(
            path,
            """
            CREATE TABLE msgs(id INTEGER PRIMARY KEY, sender TEXT, body TEXT, score REAL, data BLOB);
            CREATE INDEX msgs_sender ON msgs(sender);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200000)
            INSERT INTO msgs(sender, body, score, data)
              SELECT 'user' || (i % 97), printf('message %d %s', i, hex(randomblob(60))), i * 0.5, randomblob(16) FROM n;
            """)
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64)
        let file = try DatabaseFile(path: path, key: .passphrase("pw"))
        var started = Date()
        var decoded = 0
        for page in 1...file.pageCount { if case .success = file.page(page) { decoded += 1 } }
        let decodeSeconds = Date().timeIntervalSince(started)
        started = Date()
        let walker = TreeWalker(source: file)
        var cells = 0
        for page in 1...file.pageCount { if case .success(let parsed) = walker.parse(page) { cells += parsed.cells.count } }
        print(
            String(
                format: "[throughput] decode only: %d pages in %.2f s; decode+parse: %d cells in %.2f s",
                decoded, decodeSeconds, cells, Date().timeIntervalSince(started)))
        for label in ["pristine", "interior pages zeroed"] {
            if label != "pristine" {
                let roles = try pageRoles(path, key: "pw").filter { $0.role == .tableInterior && $0.owner == "msgs" }
                for info in roles { try Damage.zeroPage(path, page: info.pageNumber, pageSize: 4096) }
            }
            var sink = CountingSink()
            let salvager = try Salvager(path: path, key: .passphrase("pw"))
            let report = try salvager.run(into: &sink)
            let megabytes = Double(size) / 1_048_576
            print(
                String(
                    format: "[throughput] %@: %.1f MB, %d pages, %d rows (%d adopted leaves) in %.2f s = %.1f MB/s, %.0f rows/s",
                    label, megabytes, report.pagesTotal, report.rowsSalvaged, report.orphanLeavesAdopted,
                    report.seconds, megabytes / report.seconds, Double(report.rowsSalvaged) / report.seconds))
            XCTAssertEqual(report.rowsSalvaged, 200_000)
        }
    }
}

/// Counts rows without keeping them.
struct CountingSink: SalvageSink {
    var rows = 0
    mutating func begin(table: TableDescription) throws {}
    mutating func insert(_ row: SalvagedRow, into table: TableDescription) throws { rows += 1 }
    mutating func finish(schema: Schema) throws {}
}
