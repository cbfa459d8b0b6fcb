import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

/// Builds small real databases with the `sqlcipher` shell and damages them the way a hostile file would.
enum HostileFile {
    static let pageSize = 1024

    /// A plaintext database of 1024-byte pages: a rowid table deep enough for interior pages, rows with
    /// overflow chains, an index, and a freelist (rows deleted at the end).
    static func make(at path: String, walCopy: String? = nil) throws {
        var sql = """
            PRAGMA page_size = \(pageSize);
            """
        if walCopy != nil { sql += "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0;\n" }
        sql += """
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT, big BLOB);
            CREATE INDEX t_body ON t(body);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 400)
              INSERT INTO t SELECT x, 'row body ' || x, CASE WHEN x % 50 = 0 THEN zeroblob(3000) ELSE NULL END FROM c;
            DELETE FROM t WHERE id BETWEEN 100 AND 160;

            """
        if let walCopy { sql += ".system cp '\(path)-wal' '\(walCopy)'\n" }
        let result = try Shell.run("/usr/bin/sqlcipher", ["-batch", path], input: sql)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    static func bytes(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    static func putU32(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt32) {
        for index in 0..<4 { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(index))) }
    }

    static func putU16(_ bytes: inout [UInt8], _ offset: Int, _ value: UInt16) {
        bytes[offset] = UInt8(value >> 8)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: value)
    }

    static func page(_ bytes: [UInt8], _ number: Int) -> [UInt8] {
        Array(bytes[((number - 1) * pageSize)..<(number * pageSize)])
    }

    /// Page numbers of B-tree pages of `type` (page 1 excluded).
    static func pages(_ bytes: [UInt8], type: BTreePageType) -> [Int] {
        (2...(bytes.count / pageSize)).filter { page(bytes, $0)[0] == type.rawValue }
    }

    /// The overflow pages of every chain, found from the leaf cells (first page of each chain, in order).
    static func firstOverflowPages(_ bytes: [UInt8]) -> [UInt32] {
        let count = UInt32(bytes.count / pageSize)
        return pages(bytes, type: .tableLeaf).flatMap { number -> [UInt32] in
            guard let tree = BTreePage(bytes: page(bytes, number), pageNumber: UInt32(number), usableSize: pageSize),
                let cells = tree.cells(maxPayload: bytes.count, maxPage: count)
            else { return [] }
            return cells.compactMap(\.overflowPage)
        }
    }

    /// Rewrites the checksums of every frame of a WAL after its frame headers were edited.
    static func resealWAL(_ wal: inout [UInt8]) {
        WALBytes.reseal(&wal, pageSize: pageSize)
    }
}
