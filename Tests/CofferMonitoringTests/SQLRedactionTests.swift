import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

final class SQLRedactionTests: XCTestCase {
    func testLiteralsBecomePlaceholdersAndIdentifiersStay() {
        XCTAssertEqual(
            SQLRedaction.redacted("SELECT \"it's\", [a b], `c` FROM t WHERE x = 'O''Brien' AND y = X'00ff' AND z > 12.5e-3"),
            "SELECT \"it's\", [a b], `c` FROM t WHERE x = ? AND y = ? AND z > ?")
        XCTAssertEqual(SQLRedaction.redacted("SELECT t1.c2 FROM t1 LIMIT 20 -- note 'x'\n"), "SELECT t1.c2 FROM t1 LIMIT ?")
        XCTAssertEqual(SQLRedaction.redacted("SELECT /* 42 */ .5, -3"), "SELECT  ?, -?")
    }

    func testKeysNeverShowWhateverTheirForm() {
        for sql in [
            "PRAGMA key = 'hunter2'", "PRAGMA key = \"hunter2\"", "pragma main.rekey=hunter2",
            "PRAGMA hexkey = \"x'68756e74657232'\"",
            "ATTACH DATABASE 'other.db' AS other KEY 'hunter2'", "ATTACH 'other.db' AS o KEY \"hunter2\"",
        ] {
            XCTAssertFalse(SQLRedaction.redacted(sql).contains("hunter2"), sql)
            XCTAssertFalse(SQLRedaction.withoutKeys(sql).contains("hunter2"), sql)
            XCTAssertFalse(SQLRedaction.withoutKeys(sql).contains("68756e"), sql)
        }
        XCTAssertEqual(SQLRedaction.withoutKeys("PRAGMA foreign_keys = ON"), "PRAGMA foreign_keys = ON")
    }
}
