// Ground truth of the fixtures in Tests/Fixtures/sqlcipher/, written by SQLCipher 4.12 with
// make_fixtures.py: `row(i)` below mirrors the script's `row()`.

import CofferTestSupport
import Foundation

@testable import CofferRepair

enum SQLCipherFixtures {
    /// The raw key of v4-rawkey.db (the script's RAW_KEY).
    static let rawKey: [UInt8] = Array(repeating: [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef], count: 4).flatMap { $0 }

    static func path(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sqlcipher/\(name)").path
    }

    /// The passphrase of a fixture: "pw-" + its name without ".db".
    static func passphrase(_ name: String) -> String { "pw-" + name.replacingOccurrences(of: ".db", with: "") }

    /// msgs row i as the salvage engine reports it: [rowid, id, sender, body, score, data].
    static func msgsRow(_ i: Int) -> [SalvagedValue] {
        var body = "message \(i)"
        body += String(repeating: String(format: " lorem ipsum %04d", i), count: i % 100 == 0 ? 200 : 1)
        let data = (0..<8).map { UInt8((i * 31 + $0 * 7) % 256) }
        return [
            .integer(Int64(i)), .integer(Int64(i)), .text(Array("user\(i % 7)".utf8)), .text(Array(body.utf8)),
            .real(Double(i) * 0.5), .blob(data),
        ]
    }

    static func msgs(_ range: ClosedRange<Int>) -> Set<[SalvagedValue]> { Set(range.map(msgsRow)) }

    /// kv rows: [k, v] for k = 0..<20.
    static let kv: Set<[SalvagedValue]> = Set(
        (0..<20).map { [.text(Array(String(format: "key%02d", $0).utf8)), .integer(Int64($0 * $0))] })

    /// A copy of fixture `name` (and its -wal) in `dir`, for tests that damage or migrate it.
    static func copy(_ name: String, to dir: TemporaryDirectory) throws -> String {
        let target = dir.path(name)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path(name) + suffix) {
            try FileManager.default.copyItem(atPath: path(name) + suffix, toPath: target + suffix)
        }
        return target
    }
}
