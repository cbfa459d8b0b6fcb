import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Issue #38, item 1: a WITHOUT ROWID table (its B-tree an index B-tree whose cells are the rows) loses an
/// interior page. The rows stored in that page's cells are gone; every row of its intact leaves (and other
/// interior pages) must come back through orphan adoption, key columns first in the declared PRIMARY KEY
/// order. The table's own index `contacts_city` is intact and its entries (city, phone, email, name) have the
/// rows' shape (four fields, each fitting the column it would land in): an intact index owns no orphan, so it
/// must not make the table's leaves look like index pages (it did: 0 rows of 1,050 came back). The file also
/// holds a rowid table whose index `calls_by` has the rows' shape too ((caller, callee, memo, rowid) fits
/// `contacts`, whose `city` has no type) and whose root is zeroed as well: its orphaned entries must never
/// become `contacts` rows. Files come from independent producers: Python's `sqlite3` (plaintext) and the
/// `sqlcipher` shell (SQLCipher 3).
final class WithoutRowidInteriorLossTests: XCTestCase {
    static let sql = """
        CREATE TABLE contacts(name TEXT, email TEXT, phone TEXT, city, PRIMARY KEY(email, name)) WITHOUT ROWID;
        CREATE INDEX contacts_city ON contacts(city, phone);
        CREATE TABLE calls(id INTEGER PRIMARY KEY, caller TEXT, callee TEXT, memo TEXT);
        CREATE INDEX calls_by ON calls(caller, callee, memo);
        WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 1049)
        INSERT INTO contacts SELECT 'name ' || i, printf('user%05d@example.com', i),
          printf('+1555%07d', (i * 7919) % 10000000), 'city ' || (i % 97) FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
        INSERT INTO calls(caller, callee, memo) SELECT printf('caller%04d', i % 300),
          printf('callee%04d', i), 'memo ' || substr(hex(zeroblob(40)), 1, 10 + i % 60) FROM n;
        """

    func testPlaintextWithoutRowidTableKeepsTheRowsOfItsIntactPages() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("contacts.db")
        try Shell.python(path, "PRAGMA page_size=4096;\n" + Self.sql)
        try assertInteriorLossRecovered(path, key: .none)
    }

    func testSQLCipher3WithoutRowidTableKeepsTheRowsOfItsIntactPages() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("contacts.db")
        try Shell.sqlcipher(path, key: "pw", Self.sql)
        try assertInteriorLossRecovered(path, key: "pw")
    }

    /// Zeroes the root of `contacts` (an interior page) and the root of `calls_by`, repairs, and checks every
    /// recovered `contacts` row against the producer's rows.
    private func assertInteriorLossRecovered(_ path: String, key: String?) throws {
        let truth = try GroundTruth.rows(path, key: key, table: "contacts", withRowid: false)
        XCTAssertEqual(truth.count, 1050)
        let calls = try GroundTruth.rows(path, key: key, table: "calls")
        let pristine = try DatabaseFile(path: path, key: key.map { Encryption.passphrase($0) } ?? .none)
        var visited = Set<UInt32>()
        let schema = Schema.read(from: pristine, visited: &visited)
        let contactsRoot = try XCTUnwrap(schema.tables.first { $0.name == "contacts" }?.rootPage)
        let indexRoot = try XCTUnwrap(schema.indexes.first { $0.name == "calls_by" }?.rootPage)
        let roles = Dictionary(uniqueKeysWithValues: PageRoles.classify(pristine).map { ($0.pageNumber, $0) })
        XCTAssertEqual(roles[contactsRoot]?.role, .indexInterior, "contacts has an interior root")
        XCTAssertEqual(roles[indexRoot]?.role, .indexInterior, "calls_by has an interior root")
        let contactsLeaves = roles.values.filter { $0.owner == "contacts" && $0.role == .indexLeaf }.count
        XCTAssertGreaterThan(contactsLeaves, 10)
        // The rows lost with the zeroed page are the cells it stores; every other page of the table is intact.
        let cellsLost = try TreeWalker(source: pristine).parse(contactsRoot).get().cells.count
        let bound = truth.count - cellsLost
        try Damage.zeroPage(path, page: contactsRoot, pageSize: 4096)
        try Damage.zeroPage(path, page: indexRoot, pageSize: 4096)

        let (sink, report) = try salvage(path, key: key)
        let recovered = sink.rows["contacts"] ?? []
        let truthSet = Set(truth)
        let invented = recovered.filter { !truthSet.contains($0.values) }
        XCTAssertEqual(invented.count, 0, "rows that are no contacts row: \(invented.prefix(3))")
        XCTAssertEqual(Set(recovered.map(\.values)).count, recovered.count, "no row twice")
        XCTAssertGreaterThanOrEqual(recovered.count, bound, "rows of intact pages: \(recovered.count) of \(truth.count)")
        XCTAssertEqual(sink.rowSet("calls"), Set(calls), "calls is untouched")
        XCTAssertEqual(sink.tables.filter(\.isInferred).map(\.name), [], "nothing inferred")
        XCTAssertEqual(report.rowsDropped, 0)
    }
}
