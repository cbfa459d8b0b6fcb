import CofferTestSupport
import Foundation
import XCTest

/// `kill -9` during a live migration: `coffer-torture --live-migration-source` migrates a file's 4,000 rows
/// (a plaintext file Python's `sqlite3` wrote, or a SQLCipher 3 file the `sqlcipher` shell wrote) into an encrypted database in batches of 20 (5 ms apart) while it runs app operations (updates, deletes
/// and inserts of rows of their own, `LiveMigrationOperation`), printing `ack N` after each commit and
/// `moved M` after each batch. The parent SIGKILLs it after a seeded number of lines, starts it again from
/// the first operation it has no `ack` for (operations are idempotent), and after the last round has it
/// finish the migration. The `sqlcipher` shell then reads the table: every source row exactly once,
/// every acknowledged update present, no deleted row back, every inserted row there; the source file's
/// bytes never changed.
///
/// Rounds: `COFFER_LIVE_MIGRATION_KILL_ROUNDS` (default 20; 200+ for the full run), seed:
/// `COFFER_LIVE_MIGRATION_KILL_SEED` (default 20261129).
final class LiveMigrationKillTests: XCTestCase {
    private let shellKey = "PRAGMA kdf_iter = 2;\nPRAGMA cipher_page_size = 4096;\n"
    private let environment = ["COFFER_TEST_PASSPHRASE": "kill pw"]

    private func childArguments(_ path: String, _ source: String, firstOperation: Int, encrypted: Bool) -> [String] {
        [
            path, "--live-migration-source", source, "--first-op", String(firstOperation), "--passphrase-env",
            "COFFER_TEST_PASSPHRASE", "--kdf-iter", "2",
        ] + (encrypted ? ["--live-migration-source-passphrase-env", "COFFER_TEST_SOURCE_PASSPHRASE"] : [])
    }

    func testSIGKILLAtAnyMomentLosesNothingDuplicatesNothingResurrectsNothing() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("plain.sqlite")
        let made = try Shell.run(
            "/usr/bin/python3",
            [
                "-c",
                """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("CREATE TABLE item_v1(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
                db.executemany("INSERT INTO item_v1 VALUES (?, ?)", [(i, "text %d" % i) for i in range(1, int(sys.argv[2]) + 1)])
                db.commit()
                """,
                source, String(LiveMigrationOperation.sourceRows),
            ])
        XCTAssertEqual(made.status, 0, made.stderr)
        try killRounds(source: source, encrypted: false, in: directory)
    }

    /// The same with an encrypted source: SQLCipher 3's defaults as the 3.4.1 shell writes them (1024-byte
    /// pages, PBKDF2-HMAC-SHA1 64,000 rounds), found from the passphrase at every relaunch.
    func testSIGKILLDuringAMigrationFromASQLCipherFile() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("sqlcipher3.db")
        try Shell.run(
            "sqlcipher", source,
            """
            PRAGMA key = 'source pw';
            CREATE TABLE item_v1(id INTEGER PRIMARY KEY, text TEXT NOT NULL);
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(LiveMigrationOperation.sourceRows))
            INSERT INTO item_v1 SELECT i, 'text ' || i FROM c;
            """)
        try killRounds(source: source, encrypted: true, in: directory)
    }

    private func killRounds(source: String, encrypted: Bool, in directory: TemporaryDirectory) throws {
        let rounds = TestKnob.value("COFFER_LIVE_MIGRATION_KILL_ROUNDS", default: 20)
        let seed: UInt64 = TestKnob.value("COFFER_LIVE_MIGRATION_KILL_SEED", default: 20_261_129)
        var random = SeededGenerator(seed: seed)
        let path = directory.path("app.db")
        let environment =
            encrypted ? self.environment.merging(["COFFER_TEST_SOURCE_PASSPHRASE": "source pw"]) { $1 } : self.environment
        let sourceBytes = try Data(contentsOf: URL(fileURLWithPath: source))

        var nextOperation = 0
        var killsDuringMigration = 0
        for round in 0..<rounds {
            let killAfter = Int.random(in: 1...12, using: &random)
            var lines = 0
            var finished = false
            var lastAck: Int?
            let end = try ChildKill.run(
                executable: Shell.tortureExecutable,
                arguments: childArguments(path, source, firstOperation: nextOperation, encrypted: encrypted),
                environment: environment
            ) { line in
                if line.hasPrefix("ack "), let operation = Int(line.dropFirst(4)) { lastAck = operation }
                if line.hasPrefix("finished") { finished = true }
                lines += 1
                return lines >= killAfter
            }
            XCTAssertTrue(end.killed, "round \(round): the child exited with \(end.status) after \(lines) lines")
            if !finished { killsDuringMigration += 1 }
            if let lastAck { nextOperation = lastAck + 1 }
            if testRun?.failureCount ?? 0 > 0 { break }
        }

        let finish = try Shell.run(
            Shell.tortureExecutable,
            childArguments(path, source, firstOperation: 0, encrypted: encrypted) + ["--finish-migration"],
            environment: environment)
        XCTAssertEqual(finish.status, 0, finish.stderr)
        XCTAssertEqual(finish.stdout, "finished \(LiveMigrationOperation.sourceRows)\n")

        let read = try Shell.sqlcipher(
            path, passphrase: "kill pw",
            shellKey
                + """
                PRAGMA integrity_check;
                SELECT done, cleaned, moved_rows, total_rows FROM coffer_live_migration;
                SELECT count(*) FROM coffer_live_migration_moved;
                SELECT id, body, edits FROM item ORDER BY id;
                """)
        XCTAssertEqual(read.status, 0, read.stderr)
        var lines = read.stdout.split(separator: "\n").map(String.init)
        XCTAssertEqual(
            Array(lines.prefix(3)), ["ok", "1|1|\(LiveMigrationOperation.sourceRows)|\(LiveMigrationOperation.sourceRows)", "0"])
        lines.removeFirst(min(3, lines.count))

        // The model: the source, then every acknowledged operation; the one after them may have committed
        // unacknowledged (killed between its commit and its `ack`), so both outcomes of it are accepted.
        var model: [Int64: String] = [:]
        for id in 1...Int64(LiveMigrationOperation.sourceRows) { model[id] = "\(id)|text \(id)|0" }
        func apply(_ operation: Int, to model: inout [Int64: String]) {
            switch LiveMigrationOperation.of(operation) {
            case .update(let id, let body): model[id] = "\(id)|\(body)|1"
            case .delete(let id): model[id] = nil
            case .insert(let id, let body): model[id] = "\(id)|\(body)|0"
            }
        }
        for operation in 0..<nextOperation { apply(operation, to: &model) }
        var withPending = model
        apply(nextOperation, to: &withPending)
        func rendered(_ model: [Int64: String]) -> [String] { model.keys.sorted().compactMap { model[$0] } }
        let matches = lines == rendered(model) || lines == rendered(withPending)
        XCTAssertTrue(matches, "the table differs from the model: \(lines.count) rows, model \(model.count)")
        if !matches {
            let expected = Set(rendered(model))
            let actual = Set(lines)
            XCTFail("missing \(expected.subtracting(actual).prefix(5)), unexpected \(actual.subtracting(expected).prefix(5))")
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: source)), sourceBytes)
        print(
            "live migration kill test (\(encrypted ? "SQLCipher 3" : "plaintext") source): \(rounds) rounds, seed \(seed), \(killsDuringMigration) kills while migrating, \(nextOperation) operations acknowledged"
        )
    }
}
