import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

/// `coffer repair`, `verify` and `info` on files whose headers lie: each must end by itself (exit, not a
/// signal), in time and memory that follow the file's real size (here ~100 KB), not the sizes it claims.
final class HostileFileBoundsTests: XCTestCase {
    private var dir: TemporaryDirectory!
    /// Generous for a debug build on a shared 2-core machine; a walk of 2^31 pages or an allocation sized
    /// from a header would exceed them by orders of magnitude. The memory bound is the child's own peak
    /// (see ``ChildRun``): 25–35 MB here in debug and coverage builds alike.
    private let secondsBound = 20.0
    private let memoryBoundMB = 150

    /// XCTest keeps every test case object until the run ends: the directory goes with the test.
    override func tearDown() {
        dir = nil
        super.tearDown()
    }

    override func setUpWithError() throws { dir = try TemporaryDirectory() }

    private func original() throws -> [UInt8] {
        let path = dir.path("original.db")
        if !FileManager.default.fileExists(atPath: path) { try HostileFile.make(at: path) }
        return try HostileFile.bytes(path)
    }

    /// Runs the three commands on `bytes` (and `wal` beside it) and checks the bounds.
    private func assertBounded(
        _ name: String, _ bytes: [UInt8], wal: [UInt8]? = nil, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let input = dir.path("\(name).db")
        try HostileFile.write(bytes, to: input)
        if let wal { try HostileFile.write(wal, to: input + "-wal") }
        let output = dir.path("\(name)-out.db")
        for arguments in [["repair", input, "-o", output], ["verify", input], ["info", input]] {
            let run = try ChildRun.coffer(arguments, in: dir.url.path)
            let label = "\(name): coffer \(arguments[0]): \(run.summary)"
            print(label)
            XCTAssertNil(run.signal, "\(label)\n\(run.stderr)", file: file, line: line)
            XCTAssertNotNil(run.exitStatus, label, file: file, line: line)
            XCTAssertLessThan(run.seconds, secondsBound, label, file: file, line: line)
            XCTAssertLessThan(run.maxRSSKilobytes / 1024, memoryBoundMB, label, file: file, line: line)
            // No command may change its input (SQLite's checkpoint-on-close would grow it to the WAL's claim).
            for (path, original) in [(input, bytes), (input + "-wal", wal ?? [])] where !original.isEmpty {
                let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
                XCTAssertEqual(size, original.count, "\(label): \(path) changed size", file: file, line: line)
                if size == original.count {
                    XCTAssertEqual(try HostileFile.bytes(path), original, "\(label): \(path) changed", file: file, line: line)
                }
            }
            if arguments[0] == "repair", run.exitStatus == 0 {
                let check = try Shell.run("/usr/bin/sqlcipher", ["-batch", output], input: "PRAGMA integrity_check;")
                XCTAssertEqual(check.stdout, "ok\n", label, file: file, line: line)
            }
        }
    }

    func testHeaderClaimingTwoToThe31Pages() throws {
        var bytes = try original()
        HostileFile.putU32(&bytes, 28, 1 << 31)
        try assertBounded("pages-2e31", bytes)
    }

    func testCellCountLargerThanItsPage() throws {
        var bytes = try original()
        for page in HostileFile.pages(bytes, type: .tableLeaf).prefix(3) + HostileFile.pages(bytes, type: .tableInterior) {
            HostileFile.putU16(&bytes, (page - 1) * HostileFile.pageSize + 3, 0xffff)
        }
        try assertBounded("cellcount", bytes)
    }

    func testOverflowChainsThatLoopAndOverclaim() throws {
        var bytes = try original()
        let firsts = HostileFile.firstOverflowPages(bytes)
        XCTAssertGreaterThanOrEqual(firsts.count, 4, "the fixture has rows with overflow chains")
        // Every overflow page's next pointer goes back to the first page of its chain: an endless chain,
        // which is what a chain claiming 10^6 pages in a 100-page file amounts to.
        for first in firsts {
            var current = Int(first)
            for _ in 0..<5 {
                let offset = (current - 1) * HostileFile.pageSize
                let next = Int(HostileFile.page(bytes, current).prefix(4).reduce(0) { $0 << 8 | Int($1) })
                HostileFile.putU32(&bytes, offset, first)
                guard next != 0 else { break }
                current = next
            }
        }
        try assertBounded("overflow-loop", bytes)
    }

    func testFreelistCycleWithAHugeCount() throws {
        var bytes = try original()
        let trunk = Int(bytes[32..<36].reduce(0) { $0 << 8 | UInt32($1) })
        XCTAssertGreaterThan(trunk, 1, "the fixture has a freelist")
        HostileFile.putU32(&bytes, (trunk - 1) * HostileFile.pageSize, UInt32(trunk))  // next trunk = itself
        HostileFile.putU32(&bytes, 36, 1_000_000_000)
        try assertBounded("freelist-cycle", bytes)
    }

    func testBTreeCycle() throws {
        var bytes = try original()
        let interiors = HostileFile.pages(bytes, type: .tableInterior) + HostileFile.pages(bytes, type: .indexInterior)
        XCTAssertFalse(interiors.isEmpty, "the fixture has interior pages")
        for page in interiors {  // the right-most child of every interior page is the page itself
            HostileFile.putU32(&bytes, (page - 1) * HostileFile.pageSize + 8, UInt32(page))
        }
        try assertBounded("btree-cycle", bytes)
    }

    func testWALClaimingABillionPagesAndFrames() throws {
        let path = dir.path("walsource.db")
        let walCopy = dir.path("walsource.wal")
        try HostileFile.make(at: path, walCopy: walCopy)
        var wal = try HostileFile.bytes(walCopy)
        XCTAssertGreaterThan(wal.count, 32 + 24 + HostileFile.pageSize)
        // Every frame becomes a commit frame that says the database now has 10^9 pages.
        var offset = 32
        while offset + 24 + HostileFile.pageSize <= wal.count {
            HostileFile.putU32(&wal, offset + 4, 1_000_000_000)
            offset += 24 + HostileFile.pageSize
        }
        HostileFile.resealWAL(&wal)
        XCTAssertNotNil(WALIndex(path: walCopy, pageSize: HostileFile.pageSize), "control: the original WAL reads")
        try HostileFile.write(wal, to: dir.path("check.wal"))
        XCTAssertEqual(
            WALIndex(path: dir.path("check.wal"), pageSize: HostileFile.pageSize)?.databaseSize,
            1_000_000_000, "the resealed WAL is valid and makes the claim")
        try assertBounded("wal-1e9", try HostileFile.bytes(path), wal: wal)
    }
}
