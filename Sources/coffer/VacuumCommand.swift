import ArgumentParser
import Coffer
import Foundation

/// `coffer vacuum DB`: gives free pages back and defragments, in bounded memory, safe to kill at any moment.
struct VacuumCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vacuum",
        abstract: "Rewrite a database without free pages (or, with --incremental, release an auto_vacuum file's free pages).",
        discussion: """
            The copy is a new file encrypted with the database's key (DB-vacuum), filled table by table and \
            renamed over DB only once complete: killed at any moment, DB is as it was or as it became. \
            --incremental runs PRAGMA incremental_vacuum in steps on an auto_vacuum = INCREMENTAL database.
            """)

    @Argument(help: "The database file (rewritten in place).")
    var database: String

    @OptionGroup var key: KeyOptions

    @Flag(help: "Release the free pages of an auto_vacuum = INCREMENTAL database in steps instead of rewriting it.")
    var incremental = false

    @Flag(name: .customLong("progress-lines"), help: "Print each progress step as a line on standard output.")
    var progressLines = false

    func run() throws {
        guard FileManager.default.fileExists(atPath: database) else {
            throw CLIFailure(status: .failure, message: "no such file: \(database)")
        }
        let sizeBefore = Self.size(database)
        let db: Database
        do { db = try Database(path: database, configuration: try key.configuration()) } catch {
            throw CLIFailure(error, opening: database)
        }
        defer { try? db.close() }
        let lines = progressLines
        do {
            if incremental {
                let freed = try db.incrementalVacuum { freed, total in
                    if lines { Self.line("progress \(freed)/\(total) pages freed") }
                }
                try db.write { try $0.executeScript("PRAGMA wal_checkpoint(TRUNCATE)") }
                print("released \(freed) free pages; \(database): \(sizeBefore) → \(Self.size(database)) bytes")
            } else {
                let report = try db.vacuum { progress in
                    if lines { Self.line("progress \(progress.step) \(progress.pagesWritten)/\(progress.pagesExpected)") }
                }
                print(
                    "vacuumed \(database): \(report.pagesBefore) → \(report.pagesAfter) pages (\(report.freePagesBefore) were free); \(sizeBefore) → \(Self.size(database)) bytes"
                )
            }
        } catch let error as CofferError where error.code.primary == .invalidConfiguration {
            throw CLIFailure(status: .failure, message: "\(database): \(error.message)")
        } catch {
            throw CLIFailure(status: .failure, message: "vacuum of \(database) failed, the database is unchanged: \(error)")
        }
    }

    private static func line(_ text: String) {
        // Unbuffered: a parent reading the lines (the kill tests) sees each one as it happens.
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    private static func size(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
}
