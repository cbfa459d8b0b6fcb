import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Damage to a SQLCipher 4 file (v4-4096.db: 1200 msgs rows, 12 of them with overflow chains, 20 kv rows)
/// and what the repair engine gets back, against the ground truth: per damage kind, the recall and zero
/// junk or altered rows. Each kind prints one `[recall]` line (figures for CofferRepair's Repair.md).
final class SQLCipher4DamageRecallTests: XCTestCase {
    private let fixtureName = "v4-4096.db"
    private let key = Encryption.passphrase("pw-v4-4096")
    private let truthCount = 1200 + 20

    private func pristineRoles() throws -> [PageInfo] {
        PageRoles.classify(try ProfileDetection.open(path: SQLCipherFixtures.path(fixtureName), key: key))
    }

    /// rowid → set of pages (its leaf and overflow pages) in the pristine file, for msgs.
    private func msgsPages() throws -> [Int64: Set<UInt32>] {
        let file = try ProfileDetection.open(path: SQLCipherFixtures.path(fixtureName), key: key)
        var visited = Set<UInt32>()
        let schema = Schema.read(from: file, visited: &visited)
        let root = try XCTUnwrap(schema.tables.first { $0.name == "msgs" }?.rootPage)
        let reader = OverflowReader(source: file)
        var result: [Int64: Set<UInt32>] = [:]
        TreeWalker(source: file).walk(root: root, visited: &visited) { page, cells in
            guard page.type == .tableLeaf else { return }
            for cell in cells {
                guard let rowid = cell.rowid else { continue }
                var pages: Set<UInt32> = [page.pageNumber]
                if let first = cell.overflowPage,
                    case .success(let chain) = reader.read(first: first, remaining: cell.payloadSize - cell.localPayload.count)
                {
                    pages.formUnion(chain.pages)
                }
                result[rowid] = pages
            }
        }
        return result
    }

    /// Salvages the damaged copy; asserts no junk or altered row; returns msgs rows recovered and recall.
    private func run(_ kind: String, damage: (String) throws -> Void) throws -> (msgs: Set<[SalvagedValue]>, recall: Double) {
        let dir = try TemporaryDirectory()
        let path = try SQLCipherFixtures.copy(fixtureName, to: dir)
        try damage(path)
        let file = try ProfileDetection.open(path: path, key: key)
        XCTAssertEqual(file.settings.name, "sqlcipher4", kind)
        var sink = CollectingSink()
        let report = try Salvager(file: file, useWAL: false).run(into: &sink)
        let truth = SQLCipherFixtures.msgs(1...1200)
        var junk = 0
        var recovered = 0
        for table in sink.tables {
            for row in sink.rowSet(table.name) {
                let known =
                    table.name == "msgs" ? truth.contains(row) : (table.name == "kv" && SQLCipherFixtures.kv.contains(row))
                if known { recovered += 1 } else { junk += 1 }
            }
        }
        XCTAssertEqual(junk, 0, "\(kind): junk or altered rows")
        let recall = Double(recovered) / Double(truthCount)
        print(
            String(
                format: "[recall] v4 %@: %d/%d rows (%.1f%%), %d junk, %d bad pages, %d adopted leaves",
                kind, recovered, truthCount, recall * 100, junk, report.pagesBadHMAC, report.orphanLeavesAdopted))
        return (sink.rowSet("msgs"), recall)
    }

    func testFlippedBytesInLeavesLoseOnlyThoseLeavesRows() throws {
        let leaves = try pristineRoles().filter { $0.role == .tableLeaf && $0.owner == "msgs" }.map(\.pageNumber)
        XCTAssertGreaterThan(leaves.count, 8)
        let hit = [leaves[leaves.count / 4], leaves[leaves.count / 2], leaves[leaves.count * 3 / 4]]
        let (msgs, _) = try run("bytes flipped in 3 leaves") { path in
            for page in hit { try Damage.flip(path, page: page, pageSize: 4096, offsetInPage: 1500) }
        }
        let lost = Set(try msgsPages().filter { !$0.value.isDisjoint(with: hit) }.keys)
        XCTAssertFalse(lost.isEmpty)
        let expected = SQLCipherFixtures.msgs(1...1200).filter { row in
            guard case .integer(let rowid) = row[0] else { return false }
            return !lost.contains(rowid)
        }
        XCTAssertEqual(msgs, Set(expected), "every row not on a damaged page comes back, and only those")
    }

    func testZeroedInteriorPageLosesNoRow() throws {
        let interior = try pristineRoles().filter { $0.role == .tableInterior && $0.owner == "msgs" }.map(\.pageNumber)
        let page = try XCTUnwrap(interior.first, "msgs must have an interior page")
        let (msgs, recall) = try run("interior page \(page) zeroed") { path in
            try Damage.zeroPage(path, page: page, pageSize: 4096)
        }
        XCTAssertEqual(msgs, SQLCipherFixtures.msgs(1...1200), "orphaned leaves are adopted whole")
        XCTAssertEqual(recall, 1.0)
    }

    func testTruncatedFileKeepsEveryRowWhosePagesSurvive() throws {
        let file = try ProfileDetection.open(path: SQLCipherFixtures.path(fixtureName), key: key)
        let keep = UInt32(file.pageCount) * 6 / 10
        let (msgs, _) = try run("truncated to \(keep) of \(file.pageCount) pages") { path in
            let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
            try handle.truncate(atOffset: UInt64(keep) * 4096 + 1000)
            try handle.close()
        }
        let surviving = Set(try msgsPages().filter { $0.value.allSatisfy { $0 <= keep } }.keys)
        let expected = SQLCipherFixtures.msgs(1...1200).filter { row in
            guard case .integer(let rowid) = row[0] else { return false }
            return surviving.contains(rowid)
        }
        XCTAssertEqual(msgs, Set(expected), "exactly the rows whose leaf and overflow pages survive")
    }
}
