import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// What the crash tests assert about a database written by `coffer-torture`.
enum TortureCheck {
    /// Rows of transaction `id`, as the child writes them.
    static func rows(for transaction: Int) -> Int { TortureRows.rows(for: transaction) }

    /// Opens `path`, checks integrity, that the committed transactions are exactly 1…N with every row of
    /// each and nothing of any other, and returns N.
    static func committedPrefix(path: String, file: StaticString = #filePath, line: UInt = #line) throws -> Int {
        let database = try Database(path: path, configuration: BackupFixture.configuration())
        defer { try? database.close() }
        return try database.read { db in
            let integrity: [String] = try db.fetchAll(sql: "PRAGMA integrity_check").compactMap { $0["integrity_check"] }
            XCTAssertEqual(integrity, ["ok"], "integrity_check", file: file, line: line)
            let hasTables = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'txn'") ?? 0
            guard hasTables > 0 else { return 0 }
            let transactions = try db.fetchAll(sql: "SELECT id, rows FROM txn ORDER BY id")
            let counts = Dictionary(
                uniqueKeysWithValues: try db.fetchAll(sql: "SELECT txn, count(*) AS c FROM entry GROUP BY txn").map {
                    (($0["txn"] as Int?) ?? -1, ($0["c"] as Int?) ?? -1)
                })
            for (index, row) in transactions.enumerated() {
                let id: Int = row["id"] ?? -1
                XCTAssertEqual(id, index + 1, "transactions must form a prefix 1…N", file: file, line: line)
                XCTAssertEqual(row["rows"] as Int?, rows(for: id), "txn \(id) row count", file: file, line: line)
                XCTAssertEqual(counts[id], rows(for: id), "partial transaction \(id) visible", file: file, line: line)
            }
            XCTAssertEqual(counts.count, transactions.count, "entries without their transaction", file: file, line: line)
            return transactions.count
        }
    }
}
