// The WAL damage kinds lose exactly the frames they report: checked against the cipher (every committed frame
// of the damaged log authenticates unless reported lost) and against the WAL checksum chain, on a -wal the
// `sqlcipher` shell wrote (through the realistic-corpus generator).

import CofferCorruption
import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

final class WALDamageTests: XCTestCase {
    func testWALDamageLosesExactlyTheFramesItReports() throws {
        let directory = try TemporaryDirectory("coffer-wal-damage")
        let made = try Shell.run(
            "/usr/bin/env",
            [
                "python3", AppCorpus.generator, directory.path("corpus"), "--apps", "chat", "--profiles", "sqlcipher3",
                "--page-sizes", "1024", "--wal", "yes",
            ])
        XCTAssertEqual(made.status, 0, made.stderr)
        let path = directory.path("corpus/chat-sqlcipher3-1024-wal.db")
        let passphrase = "corpus pass 'phrase'"
        let pristine = try WALCorruptionInjector.frames(wal: path + "-wal", pageSize: 1024)
        XCTAssertGreaterThan(pristine.count, 20)
        XCTAssertEqual(pristine.last?.isCommit, true)
        let file = try DatabaseFile(path: path, key: .passphrase(passphrase), settings: .sqlcipher3)
        for kind in WALDamageKind.allCases {
            for seed in UInt64(1)...4 {
                let copy = directory.path("\(kind.rawValue)-\(seed).db-wal")
                try? FileManager.default.removeItem(atPath: copy)
                try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy)
                let report = try WALCorruptionInjector.inject(wal: copy, pageSize: 1024, kind: kind, seed: seed, encrypted: true)
                let context = "\(kind.rawValue) seed \(seed): lost \(report.lostFrames)"
                XCTAssertEqual(report.frameCount, pristine.count)
                XCTAssertFalse(report.lostFrames.isEmpty, context)
                let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy)))
                for frame in pristine {
                    let start = 32 + frame.index * (24 + 1024) + 24
                    let authentic =
                        start + 1024 <= bytes.count
                        && (try? file.decoder.decode(Array(bytes[start..<(start + 1024)]), pageNumber: frame.page).get()) != nil
                    switch kind {
                    case .flipFrame:
                        XCTAssertEqual(authentic, !report.lostFrames.contains(frame.index), "\(context) frame \(frame.index)")
                    case .truncate:
                        XCTAssertTrue(authentic || report.lostFrames.contains(frame.index), "\(context) frame \(frame.index)")
                    }
                }
                // The checksum chain holds up to the first lost frame (after a cut: the last surviving commit).
                let readable = try WALCorruptionInjector.frames(wal: copy, pageSize: 1024)
                let firstLost = report.lostFrames.min() ?? pristine.count
                XCTAssertEqual(
                    readable.count, pristine.prefix(firstLost).lastIndex(where: \.isCommit).map { $0 + 1 } ?? 0, context)
                if kind == .flipFrame {
                    XCTAssertEqual(report.lostFrames.count, 1, context)
                    XCTAssertLessThan(firstLost, pristine.count - 1, "the flipped frame is never the last: \(context)")
                }
                let again = directory.path("again.db-wal")
                try? FileManager.default.removeItem(atPath: again)
                try FileManager.default.copyItem(atPath: path + "-wal", toPath: again)
                _ = try WALCorruptionInjector.inject(wal: again, pageSize: 1024, kind: kind, seed: seed, encrypted: true)
                XCTAssertEqual(FileManager.default.contents(atPath: again), Data(bytes), "seeded: \(context)")
            }
        }
    }
}
