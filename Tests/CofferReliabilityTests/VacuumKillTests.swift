import CofferTestSupport
import Foundation
import XCTest

/// `kill -9` during `coffer vacuum`: the child prints a line at every step (`--progress-lines`: each batch
/// of rows, each index, the schema, the swap); the parent SIGKILLs it after a seeded number of lines. After
/// every kill the `sqlcipher` shell finds the database whole (integrity_check ok) with exactly the same
/// content, whether the kill came before the swap (as it was) or after (as it became), and the next vacuum
/// runs over whatever the killed one left behind.
///
/// Rounds: `COFFER_VACUUM_KILL_ROUNDS` (default 10), seed: `COFFER_VACUUM_KILL_SEED` (default 20261124).
final class VacuumKillTests: XCTestCase {
    private let shellKey = "PRAGMA kdf_iter = 2;\nPRAGMA cipher_page_size = 4096;\n"

    private func content(_ path: String) throws -> String {
        let result = try Shell.sqlcipher(
            path, passphrase: "kill pw",
            shellKey
                + """
                PRAGMA integrity_check;
                SELECT count(*), sum(id), sum(length(body)) FROM note;
                SELECT count(*), sum(v) FROM pair;
                SELECT count(*) FROM note INDEXED BY note_body WHERE body > '';
                PRAGMA user_version;
                """)
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    func testSIGKILLDuringVacuumLeavesTheDatabaseWhole() throws {
        let rounds = TestKnob.value("COFFER_VACUUM_KILL_ROUNDS", default: 10)
        let seed: UInt64 = TestKnob.value("COFFER_VACUUM_KILL_SEED", default: 20_261_124)
        var random = SeededGenerator(seed: seed)
        let dir = try TemporaryDirectory()
        let path = dir.path("kill.db")
        let made = try Shell.sqlcipher(
            path, passphrase: "kill pw",
            shellKey
                + """
                .bail on
                CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT);
                CREATE INDEX note_body ON note(body);
                CREATE TABLE pair(k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 12000)
                INSERT INTO note(body) SELECT printf('%d %s', i, hex(randomblob(60))) FROM n;
                INSERT INTO pair SELECT body, id FROM note WHERE id % 4 = 0;
                DELETE FROM note WHERE id % 2 = 0;
                PRAGMA user_version = 9;
                """)
        XCTAssertEqual(made.status, 0, made.stderr)
        let expected = try content(path)
        XCTAssertTrue(expected.hasPrefix("ok\n6000|"), expected)
        var killedBeforeSwap = 0
        var killedAfterSwap = 0
        for round in 0..<rounds {
            let killAfter = Int.random(in: 1...14, using: &random)
            let (lines, killed) = try runAndKill(path: path, afterLines: killAfter)
            XCTAssertEqual(try content(path), expected, "round \(round): killed after \(lines.count) lines: \(lines.suffix(2))")
            if killed {
                if lines.last?.hasPrefix("progress replace") == true { killedAfterSwap += 1 } else { killedBeforeSwap += 1 }
            }
            if testRun?.failureCount ?? 0 > 0 { break }
        }
        // A last, whole run over what the kills left.
        let (_, killed) = try runAndKill(path: path, afterLines: .max)
        XCTAssertFalse(killed)
        XCTAssertEqual(try content(path), expected)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-vacuum"))
        XCTAssertGreaterThan(killedBeforeSwap, 0)
        print(
            "vacuum kill test: \(rounds) rounds, seed \(seed), \(killedBeforeSwap) kills during the copy, \(killedAfterSwap) at the swap"
        )
    }

    /// Runs `coffer vacuum`, SIGKILLs it once `afterLines` progress lines arrived; returns the lines and
    /// whether it was killed (a run that ends first exits 0).
    private func runAndKill(path: String, afterLines: Int) throws -> (lines: [String], killed: Bool) {
        var lines: [String] = []
        let end = try ChildKill.run(
            executable: Shell.cofferExecutable,
            arguments: ["vacuum", path, "--progress-lines", "--passphrase-env", "COFFER_TEST_PASSPHRASE", "--kdf-iter", "2"],
            environment: ["COFFER_TEST_PASSPHRASE": "kill pw"]
        ) { line in
            if line.hasPrefix("progress ") { lines.append(line) }
            return lines.count >= afterLines
        }
        // A kill sent as the child finished may find it already exited: that run counts as whole.
        if !end.killed { XCTAssertEqual(end.status, 0, lines.joined(separator: "\n")) }
        return (lines, end.killed)
    }
}
