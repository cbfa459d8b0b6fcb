import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Recall of pinyin search against an independent reference: random names (surnames by real frequency,
/// common given-name characters) and the queries users type for them, computed by pypinyin
/// (Tools/pinyin/pinyin-recall-reference.py); every query must find its name's row. `retroflex` is the
/// initials with zh, ch and sh typed as two letters (`zhs` for 张三). 1,000 names by
/// default; `COFFER_PINYIN_NAMES=10000 swift test --filter PinyinRecallTests` for the full run. Skipped
/// when pypinyin is not installed (`pip install pypinyin`, Tools/install-system-packages.sh).
final class PinyinRecallTests: XCTestCase {
    private static let kinds = ["full", "spaced", "initials", "mixed", "prefix", "retroflex"]

    func testEveryPypinyinQueryFindsItsName() throws {
        let count = Int(ProcessInfo.processInfo.environment["COFFER_PINYIN_NAMES"] ?? "") ?? 1_000
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let script = root.appendingPathComponent("Tools/pinyin/pinyin-recall-reference.py").path
        let result = try Shell.run("/usr/bin/env", ["python3", script, String(count), "20261129"])
        try XCTSkipIf(result.stderr.contains("No module named 'pypinyin'"), "pypinyin is not installed")
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n")
        XCTAssertEqual(lines.count, count)
        let entries = try lines.map { line in
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        }
        let database = try Database.inMemory()
        var ids: [Int64] = []
        try database.write { db in
            _ = try db.upgradeSchema(for: [PinyinContact.self])
            for entry in entries {
                var row = PinyinContact(id: nil, name: entry["name"] ?? "", nickname: "")
                try row.insert(db)
                ids.append(try XCTUnwrap(row.id))
            }
        }
        var misses: [String: Int] = [:]
        var examples: [String] = []
        var hits = 0
        try database.read { db in
            for (entry, id) in zip(entries, ids) {
                for kind in Self.kinds {
                    let query = entry[kind] ?? ""
                    let found = try PinyinContact.matching(.pinyin(query)).fetchAll(db).contains { $0.id == id }
                    if found {
                        hits += 1
                    } else {
                        misses[kind, default: 0] += 1
                        if examples.count < 20 { examples.append("\(entry["name"] ?? "") by \(kind) \(query)") }
                    }
                }
            }
        }
        let perKind = Self.kinds.map { "\($0): \(count - misses[$0, default: 0])/\(count)" }.joined(separator: ", ")
        print("[pinyin recall] \(count) names: \(perKind)")
        XCTAssertEqual(hits, count * Self.kinds.count, "misses per kind: \(misses); \(examples)")
    }
}
