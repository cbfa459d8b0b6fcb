// RepairRun — runs the repair engine exactly as `coffer repair` does (Salvager into a RepairWriter, which
// writes a new Coffer database), and the SQLite shell's `.recover` as the baseline for plaintext files.

import Coffer
import CofferTestSupport
import Foundation

@testable import CofferRepair

enum RepairRun {
    /// What happened to one repair.
    enum Outcome {
        /// The output was written.
        case repaired(RepairReport, RepairWriter.Outcome)
        /// The damaged file could not be opened at all (e.g. the salt is gone).
        case refused(DatabaseFileError)
    }

    /// Salvages `damaged` into a new database at `output` (encrypted with `passphrase` when given). With
    /// `pipeline`, through the two-thread pipeline and with the writer's schema issues in the report, as the
    /// CLI runs it.
    static func repair(
        _ damaged: String, output: String, passphrase: String?, detectProfile: Bool = false, pipeline: Bool = false
    ) throws -> Outcome {
        let salvager: Salvager
        do throws(DatabaseFileError) {
            // As the CLI and Database.repair open it: a destroyed page 1 or header takes the salt of page 1's
            // newest committed WAL frame.
            let file = try DatabaseFile.withWALSaltFallback(path: damaged, salt: nil) { salt throws(DatabaseFileError) in
                guard let passphrase else { return try DatabaseFile(path: damaged, key: .none) }
                if detectProfile { return try ProfileDetection.open(path: damaged, key: .passphrase(passphrase), salt: salt) }
                return try DatabaseFile(path: damaged, key: .passphrase(passphrase), salt: salt)
            }
            salvager = Salvager(file: file)
        } catch {
            return .refused(error)
        }
        // SQLCipher 3's derivation: LibraryReader opens the output with the passphrase.
        let writer = try RepairWriter(
            path: output, encryption: passphrase.map { .passphrase($0) } ?? .none,
            cipher: CipherOptions(keyDerivation: .sqlcipher3))
        var sink = writer
        var report = try pipeline ? salvager.run(into: &sink, pipeline: SalvagePipeline()) : salvager.run(into: &sink)
        writer.annotate(&report)
        try writer.database.close()
        return .repaired(report, writer.outcome)
    }

    /// A plaintext baseline: what SQLite's own shell gets back from a damaged file.
    enum Baseline: String {
        /// `sqlite3 damaged .recover | sqlite3 output` — the intended baseline.
        case recover = ".recover"
        /// `sqlite3 damaged .dump | sqlite3 output` — the fallback where `.recover` does not work: `.dump`
        /// keeps going past corrupt pages (it retries tables in reverse rowid order) but reads no orphans.
        /// On errors it ends its script with `ROLLBACK; -- due to errors`; like anyone salvaging by hand, the
        /// pipeline turns that into COMMIT so the rows it did read count.
        case dump = ".dump"
    }

    /// The shell that reads the damaged file: SQLCipher 4.9's `sqlcipher4` (SQLite 3.49, built with
    /// DBPAGE, so its `.recover` works on plaintext files) when `COFFER_SQLCIPHER4_SHELL` names it (as
    /// Tools/test-sqlcipher4.sh does), else the system sqlite3 (3.40).
    static var readingShell: String {
        ProcessInfo.processInfo.environment["COFFER_SQLCIPHER4_SHELL"] ?? "/usr/bin/sqlite3"
    }

    /// Runs `baseline` on `damaged` with ``readingShell`` into `output` (written by the system sqlite3).
    /// Returns false when the pipeline produced no database.
    @discardableResult
    static func run(_ baseline: Baseline, _ damaged: String, output: String) throws -> Bool {
        let command =
            "'\(readingShell)' '\(damaged)' \(baseline.rawValue)"
            + " | sed 's/^ROLLBACK; -- due to errors$/COMMIT;/' | /usr/bin/sqlite3 '\(output)'"
        _ = try Shell.run("/bin/sh", ["-c", command])
        return FileManager.default.fileExists(atPath: output)
    }

    /// Whether `.recover` gives back a pristine file's tables. Debian's sqlite3 3.40.1 is built without
    /// SQLITE_ENABLE_DBPAGE_VTAB, so its `.recover` stops with "SQL logic error" after the header PRAGMAs.
    static func recoverWorks(on pristine: String, directory: TemporaryDirectory) throws -> Bool {
        let output = directory.path("recover-probe-\(UUID().uuidString).db")
        guard try run(.recover, pristine, output: output) else { return false }
        let tables = (try? LibraryReader.tableNames(output, key: .none, pageSize: 4096)) ?? []
        return !tables.isEmpty
    }
}
