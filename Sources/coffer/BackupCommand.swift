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
        print(
            "generation \(generation.id) (\(generation.kind.rawValue)): \(generation.pageCount) pages, \(generation.byteCount) bytes → \(url.appendingPathComponent(generation.dataFile).path)"
        )
    }
}
