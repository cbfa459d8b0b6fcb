import CofferTestSupport
import XCTest

@testable import CofferRepair

final class PageRolesClassificationTests: XCTestCase {
    func testClassifiesEveryPageOfAPristineFile() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("roles.db")
        try Shell.sqlcipher(
            path,
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            CREATE INDEX t_body ON t(body);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300)
            INSERT INTO t(body) SELECT hex(randomblob(100)) FROM n;
            INSERT INTO t(body) VALUES (hex(randomblob(6000)));
            CREATE TABLE gone(x); INSERT INTO gone SELECT hex(randomblob(2000)) FROM t LIMIT 20; DROP TABLE gone;
            """)
        let file = try DatabaseFile(path: path, key: .passphrase("pw"))
        let infos = PageRoles.classify(file)
        XCTAssertEqual(infos.count, Int(file.pageCount))
        XCTAssertEqual(infos.first?.role, .header)
        let byRole = Dictionary(grouping: infos, by: \.role)
        XCTAssertGreaterThan(byRole[.tableInterior]?.count ?? 0, 0)
        XCTAssertGreaterThan(byRole[.tableLeaf]?.count ?? 0, 1)
        XCTAssertGreaterThan(byRole[.indexLeaf]?.count ?? 0, 1)
        XCTAssertGreaterThanOrEqual(byRole[.overflow]?.count ?? 0, 3, "a 12 KB row spills over 3 pages")
        XCTAssertEqual(byRole[.freelistTrunk]?.count, 1)
        XCTAssertGreaterThan(byRole[.freelistLeaf]?.count ?? 0, 0)
        XCTAssertNil(byRole[.unknown])
        XCTAssertNil(byRole[.unreadable])
        XCTAssertTrue(infos.filter { $0.role == .tableLeaf }.allSatisfy { $0.owner == "t" })
        XCTAssertTrue(infos.filter { $0.role == .indexLeaf }.allSatisfy { $0.owner == "t_body" && $0.ownerKind == .index })
        XCTAssertTrue(infos.filter { $0.role == .tableLeaf }.allSatisfy { $0.ownerKind == .table })
        XCTAssertTrue(infos.filter { $0.role == .overflow }.allSatisfy { $0.owner == "t" || $0.owner == "t_body" })
        XCTAssertTrue(infos.contains { $0.role == .overflow && $0.owner == "t" })

        // A page with a bad HMAC is reported as unreadable.
        let leaf = try XCTUnwrap(infos.first { $0.role == .tableLeaf && $0.pageNumber > 2 })
        try Damage.flip(path, page: leaf.pageNumber, pageSize: 4096, offsetInPage: 100)
        let damaged = PageRoles.classify(try DatabaseFile(path: path, key: .passphrase("pw")))
        XCTAssertEqual(damaged[Int(leaf.pageNumber) - 1].role, .unreadable)
        XCTAssertEqual(damaged[Int(leaf.pageNumber) - 1].owner, "t")
    }
}
