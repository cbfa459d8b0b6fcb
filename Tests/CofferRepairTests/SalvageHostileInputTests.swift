import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Deterministic damage from a seed (SplitMix64), so every failure reproduces.
final class SalvageHostileInputTests: XCTestCase {
    func testRandomDamageToAnEncryptedFileNeverInventsRows() throws {
        for seed: UInt64 in [1, 2, 3] {
            let dir = try TemporaryDirectory()
            let path = dir.path("r.db")
            try Shell.sqlcipher(path, pageSize: 1024, standardSchemaSQL)
            let msgs = Set(try GroundTruth.rows(path, key: "pw", pageSize: 1024, table: "msgs"))
            let kv = Set(try GroundTruth.rows(path, key: "pw", pageSize: 1024, table: "kv", withRowid: false))
            let pages = try DatabaseFile(path: path, key: .passphrase("pw")).pageCount
            var random = SeededGenerator(seed: seed)
            for _ in 0..<25 {
                let page = UInt32.random(in: 2...pages, using: &random)
                try Damage.flip(
                    path, page: page, pageSize: 1024, offsetInPage: Int.random(in: 0..<1000, using: &random), count: 4)
            }
            let (sink, report) = try salvage(path, key: "pw")
            XCTAssertTrue(sink.rowSet("msgs").isSubset(of: msgs), "seed \(seed)")
            XCTAssertTrue(sink.rowSet("kv").isSubset(of: kv), "seed \(seed)")
            XCTAssertGreaterThan(report.pagesBadHMAC, 0)
            XCTAssertGreaterThan(report.rowsSalvaged, (msgs.count + kv.count) / 2, "seed \(seed): most rows survive")
        }
    }

    func testGarbagePagesAndATruncatedPlaintextFileDoNotCrash() throws {
        for seed: UInt64 in [7, 8, 9, 10] {
            let dir = try TemporaryDirectory()
            let path = dir.path("g.db")
            try Shell.run("sqlite3", path, "PRAGMA page_size=1024;\n" + standardSchemaSQL)
            let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? UInt64)
            let pages = UInt32(size / 1024)
            var random = SeededGenerator(seed: seed)
            for _ in 0..<20 {
                // Whole pages of noise, and single bytes in B-tree headers and cell pointers.
                let page = UInt32.random(in: 1...pages, using: &random)
                if Bool.random(using: &random) {
                    let noise = (0..<1024).map { _ in UInt8.random(in: 0...255, using: &random) }
                    try Damage.overwrite(path, at: UInt64(page - 1) * 1024, with: noise)
                } else {
                    let offset = UInt64(page - 1) * 1024 + UInt64(Int.random(in: 0..<40, using: &random))
                    try Damage.overwrite(path, at: offset, with: [UInt8.random(in: 0...255, using: &random)])
                }
            }
            if seed % 2 == 0 {
                let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
                try handle.truncate(atOffset: size / 2 + 100)
                try handle.close()
            }
            let (_, report) = try salvage(path, key: .none)
            XCTAssertEqual(report.pagesTotal, Int(seed % 2 == 0 ? (size / 2 + 100) / 1024 : size / 1024))
        }
    }
}
