import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// A plaintext leaf damaged in one cell pointer or key: the walk keeps the cells that still stand and loses
/// only the damaged ones (a plaintext page has no checksum, so SQLite's own `.recover` reads such leaves
/// cell by cell too). Built by the system `sqlite3`, damaged by hand, checked against the pristine rows.
final class DamagedLeafCellTests: XCTestCase {
    private static let all = Set((1...2000).map(Int64.init))

    private struct Leaf {
        let page: UInt32
        let rowids: [Int64]
    }

    private func makeTable(_ directory: TemporaryDirectory) throws -> (path: String, leaves: [Leaf]) {
        let path = directory.path("cells.db")
        _ = try Shell.run(
            "sqlite3", path,
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT NOT NULL);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
            INSERT INTO t SELECT i, printf('row %d %s', i, substr(hex(zeroblob(40)), 1, i % 60)) FROM n;
            """)
        let file = try DatabaseFile(path: path, key: .none)
        var visited = Set<UInt32>()
        let root = try XCTUnwrap(Schema.read(from: file, visited: &visited).tables.first { $0.name == "t" }?.rootPage)
        var leaves: [Leaf] = []
        TreeWalker(source: file).walk(root: root, visited: &visited) { page, cells in
            if page.type == .tableLeaf { leaves.append(Leaf(page: page.pageNumber, rowids: cells.compactMap(\.rowid))) }
        }
        XCTAssertGreaterThan(leaves.count, 10)
        return (path, leaves)
    }

    /// Writes the big-endian `value` at `offset` of page `page` (4096-byte pages, not page 1).
    private func poke(_ path: String, page: UInt32, offset: Int, _ bytes: [UInt8]) throws {
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(page - 1) * 4096 + UInt64(offset))
        try handle.write(contentsOf: Data(bytes))
        try handle.close()
    }

    private func salvagedRowids(_ path: String) throws -> [Int64: [SalvagedValue]] {
        let (sink, _) = try salvage(path, key: nil)
        var rows: [Int64: [SalvagedValue]] = [:]
        for row in sink.rows["t"] ?? [] { rows[row.rowid ?? 0] = row.values }
        return rows
    }

    func testACellPointerOutOfThePageCostsThatCellOnly() throws {
        let directory = try TemporaryDirectory()
        let (path, leaves) = try makeTable(directory)
        let leaf = leaves[3]
        // Cell 2's pointer (leaf header 8 bytes, then 2 bytes per cell) points past the page.
        try poke(path, page: leaf.page, offset: 8 + 2 * 2, [0xFF, 0xF0])
        let rows = try salvagedRowids(path)
        XCTAssertEqual(Set(rows.keys), Self.all.subtracting([leaf.rowids[2]]))
        XCTAssertEqual(
            rows[leaf.rowids[3]]?.last,
            .text(Array("row \(leaf.rowids[3]) \(String(repeating: "0", count: Int(leaf.rowids[3]) % 60))".utf8)))
    }

    /// Cell 4's pointer now names cell 5's bytes: the page parses, but the key repeats; kept in key order, cell
    /// 5 comes back once, exact, and cell 4 (no pointer names it any more) is lost. Nothing is invented.
    func testTwoPointersToOneCellKeepItOnceAndInventNothing() throws {
        let directory = try TemporaryDirectory()
        let (path, leaves) = try makeTable(directory)
        let leaf = leaves[5]
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let base = Int(leaf.page - 1) * 4096
        try poke(path, page: leaf.page, offset: 8 + 2 * 4, [bytes[base + 8 + 2 * 5], bytes[base + 8 + 2 * 5 + 1]])
        let (sink, _) = try salvage(path, key: nil)
        let rowids = (sink.rows["t"] ?? []).compactMap(\.rowid)
        XCTAssertEqual(rowids.count, Set(rowids).count, "no row twice")
        XCTAssertEqual(Set(rowids), Self.all.subtracting([leaf.rowids[4]]))
    }

    func testADamagedKeyCostsThatCellOnly() throws {
        let directory = try TemporaryDirectory()
        let (path, leaves) = try makeTable(directory)
        let leaf = leaves[7]
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let base = Int(leaf.page - 1) * 4096
        // Cell 6: [payload size varint][rowid varint]…; the rowids here are 2 bytes (≥ 128): set the key's
        // first byte so it falls before the leaf's previous key.
        let cell = Int(bytes[base + 8 + 2 * 6]) << 8 | Int(bytes[base + 8 + 2 * 6 + 1])
        XCTAssertGreaterThan(leaf.rowids[6], 127)
        try poke(path, page: leaf.page, offset: cell + 1, [0x80])
        let rows = try salvagedRowids(path)
        let expected = Self.all.subtracting([leaf.rowids[6]])
        XCTAssertTrue(expected.isSubset(of: Set(rows.keys)), "missing \(expected.subtracting(rows.keys).sorted().prefix(10))")
        XCTAssertLessThanOrEqual(rows.count, 2000)
    }
}
