import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `KeyValueStore.recompressValues`: a pass killed with SIGKILL in another process leaves every value
/// readable, whole batches compressed and the rest plain, and the next pass resumes after the last batch it
/// committed.
final class KeyValueRecompressionKillTests: XCTestCase {
    private static let pathVariable = "COFFER_KV_RECOMPRESS_PATH"
    private static let configuration = Configuration(encryption: .passphrase("kv-recompress"))
    private static let itemCount = 3000

    private static func value(_ index: Int) -> String {
        "message \(index): " + String(repeating: "see you at the station at \(index % 12), 明天见 ", count: 3)
    }

    private static func store(_ database: Database, _ compression: ColumnCompression?) throws -> KeyValueStore {
        try KeyValueStore(
            database: database, name: "chat", configuration: .init(cacheCostLimit: 0, valueCompression: compression))
    }

    /// The child's side: compresses the parent's values in batches of 5, printing after each one.
    func testHelperRecompressesValuesUntilKilled() async throws {
        guard let path = ProcessInfo.processInfo.environment[Self.pathVariable] else { return }
        let database = try Database(path: path, configuration: Self.configuration)
        for try await event in try Self.store(database, .zstd).recompressValuesWithProgress(batchSize: 5) {
            if case .progress(let done, _) = event { FileHandle.standardOutput.write(Data("done \(done)\n".utf8)) }
        }
        FileHandle.standardOutput.write(Data("finished\n".utf8))
    }

    func testAKilledPassLeavesReadableValuesAndResumesWhereItStopped() throws {
        #if os(Linux)
        let directory = try TemporaryDirectory("coffer-kv-recompress-kill")
        let path = directory.path("kv.db")
        let writer = try Database(path: path, configuration: Self.configuration)
        try Self.store(writer, nil).batch { batch in
            for index in 0..<Self.itemCount { try batch.put(Self.value(index), for: "m\(index)") }
        }
        try writer.close()
        let end = try ChildKill.run(
            executable: CommandLine.arguments[0],
            arguments: ["CofferKeyValueTests.KeyValueRecompressionKillTests/testHelperRecompressesValuesUntilKilled"],
            environment: [Self.pathVariable: path]
        ) { line in line.hasPrefix("done ") && Int(line.dropFirst(5)) ?? 0 >= 100 }
        XCTAssertTrue(end.killed, "the pass was killed, not finished")

        let database = try Database(path: path, configuration: Self.configuration)
        defer { try? database.close() }
        XCTAssertEqual(try database.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }, "ok")
        let resumeAfter = try XCTUnwrap(
            database.read { db in
                try db.fetchValue(Int.self, sql: "SELECT last_rowid FROM coffer_recompression WHERE table_name = 'kv:chat'")
            })
        XCTAssertGreaterThanOrEqual(resumeAfter, 100, "every reported batch is durable")
        XCTAssertLessThan(resumeAfter, Self.itemCount, "killed midway")
        XCTAssertEqual(resumeAfter % 5, 0, "whole batches only")
        let misplaced = try database.read { db in
            try db.fetchValue(
                Int.self, sql: "SELECT count(*) FROM \"kv:chat\" WHERE (id <= ?1) != (typeof(value) = 'blob')",
                arguments: [resumeAfter])
        }
        XCTAssertEqual(misplaced, 0, "compressed up to the last committed batch, plain after it")

        let store = try Self.store(database, .zstd)
        for index in stride(from: 0, to: Self.itemCount, by: 7) {
            XCTAssertEqual(try store.value(String.self, for: "m\(index)"), Self.value(index))
        }
        XCTAssertEqual(try store.recompressValues(), Self.itemCount - resumeAfter)
        let kinds = try database.read { db in
            try db.fetchAll(sql: "SELECT DISTINCT hex(substr(value, 1, 2)) FROM \"kv:chat\"").map {
                try $0.decode(String.self, at: 0)
            }
        }
        XCTAssertEqual(kinds, ["C000"], "every value a compressed TEXT without a dictionary")
        for index in stride(from: 3, to: Self.itemCount, by: 7) {
            XCTAssertEqual(try store.value(String.self, for: "m\(index)"), Self.value(index))
        }
        #else
        throw XCTSkip("the child process is the xctest binary on Linux")
        #endif
    }
}
