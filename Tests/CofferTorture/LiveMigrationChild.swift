import Coffer
import CofferTestSupport
import Foundation

/// The row the live migration kill test migrates: `item_v1(id, text)` of a plaintext file becomes
/// `item(id, body, edits)` of the encrypted database.
@Table("item")
struct TortureItem: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var body: String
    var edits: Int
}

/// `coffer-torture DB --live-migration-source FILE --first-op N`: declares (or resumes) the live
/// migration of `item_v1` from the file (plaintext, or encrypted under the passphrase in the environment
/// variable `--live-migration-source-passphrase-env` names) into `item`, then runs app operations N, N+1, … one
/// transaction each, printing `ack N` after each commit and `moved M` after each batch, until killed.
/// With `--finish-migration` it moves every remaining row at once instead, prints `finished` and exits.
///
/// Operation `n` is `LiveMigrationOperation.of(n)` (CofferTestSupport): each touches its own row and is
/// idempotent, so the parent can run again from the first operation it has no `ack` for.
enum LiveMigrationChild {
    static func run(
        database path: String, configuration: Configuration, source: String, sourceEncryption: Encryption,
        firstOperation: Int, finish: Bool
    ) throws {
        let database = try Database(path: path, configuration: configuration)
        var options = LiveMigrationOptions()
        options.batchSize = 20
        // Spread the 200 batches over many kill rounds, so kills land in every phase of the migration.
        options.pauseBetweenBatches = 0.005
        options.columnExpressions = ["body": "s.text", "edits": "0"]
        let migration = try database.migrateLive(
            TortureItem.self, from: .table("item_v1", inFile: source, encryption: sourceEncryption), options: options)
        if finish {
            try migration.finishNow()
            FileHandle.standardOutput.write(Data("finished \(migration.progress.movedRows)\n".utf8))
            return try database.close()
        }
        let printer = Task {
            for try await event in migration.progressUpdates() {
                if case .progress(let moved, _) = event { FileHandle.standardOutput.write(Data("moved \(moved)\n".utf8)) }
            }
            FileHandle.standardOutput.write(Data("finished\n".utf8))
        }
        var operation = firstOperation
        while operation < firstOperation + 100_000 {
            let current = LiveMigrationOperation.of(operation)
            try database.write { db in
                switch current {
                case .update(let id, let body):
                    var item = TortureItem(id: id, body: body, edits: 1)
                    try item.upsert(db)
                case .delete(let id):
                    try TortureItem(id: id, body: "", edits: 0).delete(db)
                case .insert(let id, let body):
                    var item = TortureItem(id: id, body: body, edits: 0)
                    try item.insert(db, onConflict: .replace)
                }
            }
            FileHandle.standardOutput.write(Data("ack \(operation)\n".utf8))
            operation += 1
            usleep(2000)
        }
        printer.cancel()
        try database.close()
    }
}
