import ArgumentParser
import Coffer
import Foundation

/// `coffer backup DB --to DIR`: writes a full backup generation of DB into DIR.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write a full backup generation of a database into a backup directory.",
        discussion: """
            The copy is taken with SQLite's online backup API from one read snapshot, so writers in other \
            processes keep going. Incremental generations need the change tracking of a running Coffer \
            Database (BackupScheduler); from the command line every generation is full. Repair material is \
            written beside it.
            """)

    @Argument(help: "The database file.")
    var database: String

    @Option(name: .customLong("to"), help: "The backup directory (created if needed).")
    var directory: String

    @Option(help: "Keep only this many chains (full generations with their increments) afterwards.")
    var keep: Int?

    @Option(name: .customLong("pages-per-step"), help: "Pages copied per backup step.")
    var pagesPerStep = 256

    @OptionGroup var key: KeyOptions

    func run() throws {
        var configuration = try key.configuration()
        configuration.readerCount = 1
        let url = URL(fileURLWithPath: directory)
        let generation: BackupGeneration
        do {
            guard FileManager.default.fileExists(atPath: self.database) else {
                throw CofferError(code: .fileNotFound, message: "no database at \(self.database)")
            }
            let database = try Database(path: self.database, configuration: configuration)
            defer { try? database.close() }
            generation = try database.backup(to: url, kind: .full, pagesPerStep: pagesPerStep)
            if let keep { try BackupDirectory(url: url).prune(keepingChains: keep) }
        } catch {
            throw CLIFailure(error, opening: self.database)
        }
        print("generation \(generation.id) (\(generation.kind.rawValue)): \(generation.pageCount) pages, \(generation.byteCount) bytes → \(url.appendingPathComponent(generation.dataFile).path)")
    }
}

/// `coffer restore DIR --to DB`: rebuilds a database from a backup directory.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Rebuild a database from the newest intact generation of a backup directory.",
        discussion: "Every page's HMAC and the result's integrity_check are verified before the file is put in place. An existing DB is never overwritten without --force.")

    @Argument(help: "The backup directory.")
    var directory: String

    @Option(name: .customLong("to"), help: "Where to write the restored database.")
    var destination: String?

    @Option(help: "Restore this generation instead of the newest intact one.")
    var generation: Int?

    @Flag(help: "Replace DB if it exists.")
    var force = false

    @Flag(help: "List the generations instead of restoring.")
    var list = false

    @OptionGroup var key: KeyOptions

    func run() throws {
        let url = URL(fileURLWithPath: directory)
        if list {
            let store = BackupDirectory(url: url)
            for generation in try store.generations() {
                let state = store.isRestorable(generation) ? "ok" : "DAMAGED"
                print("\(generation.id)\t\(generation.kind.rawValue)\tchain \(generation.chain.map(String.init).joined(separator: "+"))\t\(generation.pageCount) pages\t\(generation.byteCount) bytes\t\(ISO8601DateFormatter().string(from: generation.createdAt))\t\(state)")
            }
            return
        }
        guard let destination else { throw ValidationError("restore needs --to DB (or --list)") }
        if !force && FileManager.default.fileExists(atPath: destination) {
            throw CLIFailure(status: .failure, message: "\(destination) exists; pass --force to replace it")
        }
        let restored: BackupGeneration
        do {
            restored = try Database.restore(
                from: url, to: destination, configuration: try key.configuration(), generation: generation, replacingExisting: force)
        } catch {
            throw CLIFailure(error, opening: directory)
        }
        print("restored generation \(restored.id) (\(restored.kind.rawValue), chain \(restored.chain.map(String.init).joined(separator: "+"))) to \(destination)")
    }
}

/// `coffer verify DB`: per-page HMAC scan and integrity_check.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every page's HMAC and run PRAGMA integrity_check. Exit 0 clean, 1 damaged.")

    @Argument(help: "The database file.")
    var database: String

    @Flag(help: "Print one JSON object instead of text.")
    var json = false

    @OptionGroup var key: KeyOptions

    func run() throws {
        let report: VerificationReport
        do {
            report = try Database.verify(path: database, configuration: try key.configuration())
        } catch {
            throw CLIFailure(error, opening: database)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            print(String(decoding: try encoder.encode(report), as: UTF8.self))
        } else {
            print("pages:           \(report.pageCount) × \(report.pageSize) bytes")
            print("damaged pages:   \(report.damagedPages.isEmpty ? "none" : report.damagedPages.map(String.init).joined(separator: ", "))")
            let errors = report.integrityErrors
            let shown = errors.prefix(20).joined(separator: "\n                 ") + (errors.count > 20 ? "\n                 … \(errors.count - 20) more" : "")
            print("integrity_check: \(errors.isEmpty ? "ok" : shown)")
        }
        if !report.isClean {
            throw CLIFailure(status: .failure, message: "\(database) is damaged")
        }
    }
}
