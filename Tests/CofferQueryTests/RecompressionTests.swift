import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `recompress`: existing rows compressed, recompressed and decompressed in batches, resumable after the
/// process doing it is killed.
final class RecompressionTests: XCTestCase {
    private static let pathVariable = "COFFER_RECOMPRESS_PATH"
    private static let configuration = Configuration(encryption: .passphrase("recompress"))
    private static let rowCount = 4000

    private static func texts() -> [String] {
        chatSamples(count: rowCount, seed: 17).map { $0 + " — " + $0 }
    }

    /// A database whose `note` rows were written before compression was declared, with dictionary 1.
    private static func makePlainDatabase(at path: String) throws -> Database {
        let database = try Database(path: path, configuration: configuration)
        try database.write { db in
            try db.upgradeSchema(for: [PlainNote.self])
            try PlainNote.insertAll(texts().map { PlainNote(id: nil, body: $0) }, db)
            try db.trainCompressionDictionary(id: 1, from: chatSamples(count: 3000), maximumSize: 16 * 1024)
        }
        return database
    }

    private static func storedTypes(_ database: Database) throws -> [String: Int] {
        try database.read { db in
            var counts: [String: Int] = [:]
            for row in try db.fetchAll(sql: "SELECT typeof(body), count(*) FROM note GROUP BY 1") {
                counts[try row.decode(String.self, at: 0)] = try row.decode(Int.self, at: 1)
            }
            return counts
        }
    }

    func testRecompressCompressesThenTurnsCompressionOffWhileReadsStayPlain() async throws {
        let directory = try TemporaryDirectory("coffer-recompress")
        let database = try Self.makePlainDatabase(at: directory.path("notes.db"))
        defer { try? database.close() }
        XCTAssertEqual(try Self.storedTypes(database), ["text": Self.rowCount])

        var events: [ProgressEvent<Int>] = []
        for try await event in database.recompressWithProgress(CompressedNote.self, batchSize: 500) { events.append(event) }
        guard case .finished(let rewritten)? = events.last else { return XCTFail("no finished event") }
        XCTAssertEqual(rewritten, Self.rowCount)
        XCTAssertGreaterThanOrEqual(events.count, Self.rowCount / 500 + 1)
        try checkCompressedThenTurnOff(database)
    }

    /// After the pass: every row compressed with dictionary 1; then `.off` stores them plain again.
    private func checkCompressedThenTurnOff(_ database: Database) throws {
        XCTAssertEqual(try Self.storedTypes(database), ["blob": Self.rowCount])
        XCTAssertEqual(try database.read { try CompressedNote.order { $0.id.asc }.fetchAll($0) }.map(\.body), Self.texts())
        let header = try database.read { try $0.fetchValue(String.self, sql: "SELECT hex(substr(body, 1, 2)) FROM note LIMIT 1") }
        XCTAssertEqual(header, "C001")

        // Turned off: new rows are written plain, old ones read plain, and the pass stores them plain.
        try database.write { db in
            var note = UncompressedNote(id: nil, body: "written after compression was turned off, written plain")
            try note.insert(db)
        }
        XCTAssertEqual(try database.read { try UncompressedNote.fetchCount($0) }, Self.rowCount + 1)
        XCTAssertEqual(try database.recompress(UncompressedNote.self, batchSize: 700), Self.rowCount + 1)
        XCTAssertEqual(try Self.storedTypes(database), ["text": Self.rowCount + 1])
        XCTAssertEqual(
            try database.read { try PlainNote.order { $0.id.asc }.limit(Self.rowCount).fetchAll($0) }.map(\.body), Self.texts())
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM coffer_recompression") }, 0)
    }

    /// The child's side: recompresses the parent's database in small batches, printing after each one.
    func testHelperRecompressesUntilKilled() async throws {
        guard let path = ProcessInfo.processInfo.environment[Self.pathVariable] else { return }
        let database = try Database(path: path, configuration: Self.configuration)
        for try await event in database.recompressWithProgress(CompressedNote.self, batchSize: 5) {
            if case .progress(let done, _) = event { FileHandle.standardOutput.write(Data("done \(done)\n".utf8)) }
        }
        FileHandle.standardOutput.write(Data("finished\n".utf8))
    }

    func testAKilledPassLeavesReadableRowsAndResumesWhereItStopped() throws {
        #if os(Linux)
        let directory = try TemporaryDirectory("coffer-recompress-kill")
        let path = directory.path("notes.db")
        try Self.makePlainDatabase(at: path).close()
        let end = try ChildKill.run(
            executable: CommandLine.arguments[0],
            arguments: ["CofferQueryTests.RecompressionTests/testHelperRecompressesUntilKilled"],
            environment: [Self.pathVariable: path]
        ) { line in line.hasPrefix("done ") && Int(line.dropFirst(5)) ?? 0 >= 100 }
        XCTAssertTrue(end.killed, "the pass was killed, not finished")

        let database = try Database(path: path, configuration: Self.configuration)
        defer { try? database.close() }
        XCTAssertEqual(try database.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }, "ok")
        // The pass resumes after the last committed batch: whole batches of 5, compressed up to there only.
        let resumeAfter = try XCTUnwrap(
            database.read { db in
                try db.fetchValue(Int.self, sql: "SELECT last_rowid FROM coffer_recompression WHERE table_name = 'note'")
            })
        XCTAssertGreaterThanOrEqual(resumeAfter, 100, "every reported batch is durable")
        XCTAssertLessThan(resumeAfter, Self.rowCount, "killed midway")
        XCTAssertEqual(resumeAfter % 5, 0, "whole batches only")
        let misplaced = try database.read { db in
            try db.fetchValue(
                Int.self,
                sql: "SELECT count(*) FROM note WHERE (rowid <= ?1) != (typeof(body) = 'blob')", arguments: [resumeAfter])
        }
        XCTAssertEqual(misplaced, 0)
        // Every row reads plain, compressed or not.
        XCTAssertEqual(try database.read { try CompressedNote.order { $0.id.asc }.fetchAll($0) }.map(\.body), Self.texts())
        XCTAssertEqual(try database.recompress(CompressedNote.self), Self.rowCount - resumeAfter)
        XCTAssertEqual(try Self.storedTypes(database), ["blob": Self.rowCount])
        XCTAssertEqual(try database.read { try CompressedNote.order { $0.id.asc }.fetchAll($0) }.map(\.body), Self.texts())
        #else
        throw XCTSkip("the child process is the xctest binary on Linux")
        #endif
    }
}
