import ArgumentParser
import Coffer
import CofferTestSupport
import Foundation

/// `coffer-torture DB`: the crash tests' child process (a test-only executable). Writes numbered
/// transactions and prints `ack N` after each commit, until killed or `--count` is reached.
///
/// Transaction N inserts `txn(N, rows)` and `rows` = ``TortureRows/rows(for:)`` rows into `entry`, so a
/// reader can tell a whole transaction from a partial one. With `--backup-dir`, a ``BackupScheduler`` writes
/// generations continuously meanwhile; `--checkpoint-threshold` makes checkpoints frequent. With
/// `--interrupt-every-ms N`, another thread calls `database.interrupt()` at random moments (0–2N ms apart):
/// each transaction then runs a statement of a few milliseconds halfway through its inserts, and an
/// interrupted one prints `interrupted N`, rolls back and is tried again under the same number.
@main
struct TortureCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "coffer-torture")

    @Argument var database: String
    @Option var count = Int.max
    @Option(name: .customLong("checkpoint-threshold")) var checkpointThreshold = 1000
    @Option(name: .customLong("backup-dir")) var backupDirectory: String?
    @Option(name: .customLong("backup-pages")) var backupPages = 16
    @Flag var full = false
    @Option(name: .customLong("passphrase-file")) var passphraseFile: String?
    @Option(name: .customLong("passphrase-env")) var passphraseEnv: String?
    @Option(name: .customLong("kdf-iter")) var kdfIterations: Int?
    @Option(name: .customLong("interrupt-every-ms")) var interruptEveryMilliseconds: Int?
    @Option(name: .customLong("live-migration-source"), help: "Run the live migration child (LiveMigrationChild).")
    var liveMigrationSource: String?
    @Option(
        name: .customLong("live-migration-source-passphrase-env"),
        help: "The live migration source's passphrase, from this environment variable (default: a plaintext source).")
    var liveMigrationSourcePassphraseEnv: String?
    @Option(name: .customLong("first-op")) var firstOperation = 0
    @Flag(name: .customLong("finish-migration")) var finishMigration = false

    /// The passphrase from `--passphrase-file` (one trailing newline stripped) or `--passphrase-env`, and
    /// SQLCipher 3's derivation with `--kdf-iter` rounds when given.
    private func configuration() throws -> Configuration {
        var cipher = CipherOptions()
        if let kdfIterations { cipher.keyDerivation = .pbkdf2SHA1(rounds: kdfIterations) }
        if let passphraseFile {
            guard var data = FileManager.default.contents(atPath: passphraseFile) else {
                throw ValidationError("cannot read passphrase file \(passphraseFile)")
            }
            if data.last == UInt8(ascii: "\n") { data.removeLast() }
            return Configuration(encryption: .passphraseData(data), cipher: cipher)
        }
        if let passphraseEnv, let value = ProcessInfo.processInfo.environment[passphraseEnv] {
            return Configuration(encryption: .passphrase(value), cipher: cipher)
        }
        return Configuration(encryption: .none, cipher: cipher)
    }

    /// Counts to 20,000 in a recursive CTE: a few milliseconds of work in one statement.
    static let busyStatement =
        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 20000) SELECT count(*) FROM c"

    func run() throws {
        if let liveMigrationSource {
            let configuration = try configuration()
            var sourceEncryption = Encryption.none
            if let name = liveMigrationSourcePassphraseEnv {
                guard let value = ProcessInfo.processInfo.environment[name] else {
                    throw ValidationError("environment variable \(name) is not set")
                }
                sourceEncryption = .passphrase(value)
            }
            return try LiveMigrationChild.run(
                database: database, configuration: configuration, source: liveMigrationSource,
                sourceEncryption: sourceEncryption, firstOperation: firstOperation, finish: finishMigration)
        }
        var configuration = try configuration()
        configuration.checkpointThreshold = checkpointThreshold
        configuration.idleCheckpointDelay = 0.05
        configuration.synchronous = full ? .full : .normal
        let database = try Database(path: self.database, configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS txn(id INTEGER PRIMARY KEY, rows INTEGER NOT NULL)")
            try db.execute(
                sql:
                    "CREATE TABLE IF NOT EXISTS entry(txn INTEGER NOT NULL, seq INTEGER NOT NULL, payload BLOB, PRIMARY KEY(txn, seq))"
            )
        }
        var scheduler: BackupScheduler?
        if let backupDirectory {
            var backups = BackupConfiguration(directory: URL(fileURLWithPath: backupDirectory))
            backups.interval = nil
            backups.changedPagesThreshold = backupPages
            backups.pollInterval = 0.01
            backups.incrementsPerChain = 5
            scheduler = BackupScheduler(database: database, configuration: backups)
            scheduler?.start()
        }
        let first = (try database.read { try $0.fetchValue(Int.self, sql: "SELECT max(id) FROM txn") } ?? 0) + 1
        let interrupter = interruptEveryMilliseconds.map { Interrupter(database: database, everyMilliseconds: $0) }
        var transaction = first
        while transaction - first < count {
            let id = transaction
            do {
                try database.write { db in
                    let rows = TortureRows.rows(for: id)
                    try db.execute(sql: "INSERT INTO txn(id, rows) VALUES (?, ?)", arguments: [id, rows])
                    for seq in 0..<rows {
                        if seq == rows / 2, interrupter != nil {
                            // A statement long enough (a few ms) for interrupt() to land in, halfway through.
                            _ = try db.fetchValue(Int.self, sql: Self.busyStatement)
                        }
                        let payload = Data((0..<(200 + seq * 37)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ id) })
                        try db.execute(
                            sql: "INSERT INTO entry(txn, seq, payload) VALUES (?, ?, ?)", arguments: [id, seq, payload])
                    }
                }
            } catch CofferError.interrupt where interrupter != nil {
                FileHandle.standardOutput.write(Data("interrupted \(id)\n".utf8))
                continue
            }
            FileHandle.standardOutput.write(Data("ack \(id)\n".utf8))
            transaction += 1
        }
        interrupter?.stop()
        scheduler?.stop()
        try database.close()
    }
}

/// Calls `database.interrupt()` from its own thread at random moments until stopped.
final class Interrupter: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false

    init(database: Database, everyMilliseconds: Int) {
        Thread {
            var random = SystemRandomNumberGenerator()
            while !self.lock.withLock({ self.stopped }) {
                usleep(useconds_t(Int.random(in: 0...(2 * everyMilliseconds * 1000), using: &random)))
                database.interrupt()
            }
        }.start()
    }

    func stop() { lock.withLock { stopped = true } }
}
