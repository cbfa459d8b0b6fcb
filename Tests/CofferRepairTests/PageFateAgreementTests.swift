import CofferTestSupport
import XCTest

@testable import CofferRepair

/// `coffer verify --page-map` and `coffer repair --page-map` classify every page the same way (#38): on a
/// SQLCipher 3 file written by the `sqlcipher` shell with one interior page zeroed, no page that
/// authenticates is unparseable, and the two maps differ only where repair adopted an orphan verify shows.
final class PageFateAgreementTests: XCTestCase {
    /// Two tables with overflowing rows (some of them under the zeroed interior page, so orphan leaves
    /// carry overflow chains no tree reaches) and an index, on 1024-byte pages: three-level table trees.
    private let sql = """
        CREATE TABLE msgs(id INTEGER PRIMARY KEY, sender TEXT, body TEXT, score REAL);
        CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT);
        CREATE INDEX msgs_sender ON msgs(sender);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1500)
        INSERT INTO msgs(sender, body, score)
          SELECT 'user' || (i % 7), printf('message %d %s', i, hex(randomblob(30 + i % 40))), i * 0.5 FROM n;
        UPDATE msgs SET body = body || hex(randomblob(1500)) WHERE id % 29 = 0;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1200)
        INSERT INTO notes(title, body) SELECT printf('note %d', i), hex(randomblob(20 + i % 30)) FROM n;
        DELETE FROM msgs WHERE id % 13 = 0;
        """

    func testVerifyAndRepairAgreeOnEveryPageAfterAZeroedInteriorPage() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("fates.db")
        try Shell.sqlcipher(path, pageSize: 1024, sql)
        let interior = try Damage.zeroNonRootInterior(of: "msgs", in: path, key: "pw", pageSize: 1024)

        // As `coffer verify --page-map` builds it, then as `coffer repair --page-map` does after its run.
        let file = try DatabaseFile(path: path, key: .passphrase("pw"))
        let verified = PageMap.build(file: file)
        let salvager = Salvager(file: try DatabaseFile(path: path, key: .passphrase("pw")))
        var sink = CollectingSink()
        let report = try salvager.run(into: &sink)
        let repaired = PageMap.build(salvager: salvager)

        XCTAssertEqual(verified.pageCount, Int(file.pageCount))
        XCTAssertEqual(repaired.pageCount, verified.pageCount)
        XCTAssertGreaterThan(report.orphanLeavesAdopted, 10)
        let index = Int(interior) - 1
        XCTAssertEqual(verified.fates[index], .hmacFailed, "a zeroed SQLCipher page fails its HMAC")
        XCTAssertEqual(repaired.fates[index], .hmacFailed)

        var unparseable: [UInt32] = []
        var disagreements: [String] = []
        for page in 1...file.pageCount {
            let at = Int(page) - 1
            if file.page(page).isSuccess, verified.fates[at] == .unparseable || repaired.fates[at] == .unparseable {
                unparseable.append(page)
            }
            let same = verified.fates[at] == repaired.fates[at] && verified.kinds[at] == repaired.kinds[at]
            let adopted = verified.fates[at] == .orphan && repaired.fates[at] == .adopted
            if !same && !adopted {
                disagreements.append(
                    "page \(page): verify \(verified.kinds[at]) \(verified.fates[at]), repair \(repaired.kinds[at]) \(repaired.fates[at])"
                )
            }
        }
        XCTAssertEqual(unparseable, [], "a page that authenticates is never unparseable")
        XCTAssertEqual(disagreements, [], "\(disagreements.count) of \(file.pageCount) pages disagree")
        XCTAssertEqual(report.pagesUnparseable, 0)
        // The orphan leaves' overflow pages are there to be misread: the fixture exercises them.
        let orphanOverflow = (0..<verified.pageCount).filter {
            verified.kinds[$0] == .overflow && verified.fates[$0] == .orphan
        }
        XCTAssertGreaterThan(orphanOverflow.count, 0)
        XCTAssertTrue(orphanOverflow.allSatisfy { repaired.fates[$0] == .adopted }, "their leaves' rows were salvaged")
        XCTAssertEqual(verified.fateCounts[.adopted, default: 0], 0, "verify adopts nothing")

        // Every fate's legend entry says what an operator can do about it.
        let svg = PageMapSVG.render(verified, title: "fates.db")
        for fate in PageFate.allCases {
            XCTAssertTrue(svg.contains(PageMapSVG.escape(fate.advice)), "no advice for \(fate)")
        }
    }
}
