import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class IncrementalCostTests: XCTestCase {
    /// The honest worst case: 1,000 rows spread over the whole table touch nearly every leaf, and the
    /// increment approaches a full copy; the same 1,000 rows clustered touch a few dozen pages.
    func testIncrementSizeFollowsChangedPagesNotRows() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 20_000)
        let backups = directory.url.appendingPathComponent("backups")
        let full = try database.backup(to: backups)
        try database.write { db in try db.execute(sql: "UPDATE item SET body = body || 'c' WHERE id BETWEEN 5001 AND 6000") }
        let clustered = try database.backup(to: backups)
        try database.write { db in try db.execute(sql: "UPDATE item SET body = body || 's' WHERE id % 20 = 0") }
        let scattered = try database.backup(to: backups)
        XCTAssertEqual([clustered.kind, scattered.kind], [.incremental, .incremental])
        XCTAssertLessThan(clustered.storedPageCount, full.pageCount / 10)
        XCTAssertGreaterThan(scattered.storedPageCount, clustered.storedPageCount * 5)
        print(
            "1,000 changed rows: clustered \(clustered.byteCount) bytes (\(clustered.storedPageCount) pages), scattered \(scattered.byteCount) bytes (\(scattered.storedPageCount) pages), full copy \(full.byteCount) bytes (\(full.pageCount) pages)"
        )
    }
}
