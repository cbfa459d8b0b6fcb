import CofferEngine
import Foundation

/// Where a live migration takes a table's rows from: a table of the same database (a rename or a
/// reshape), or a table of another SQLite file that is only ever read — plaintext, or encrypted by
/// SQLCipher 1, 2, 3 or 4 or by Coffer.
///
/// ```swift
/// let renamed = LiveMigrationSource.table("messages_v1")
/// let imported = LiveMigrationSource.table("message", inFile: "/path/to/plain.sqlite")
/// let fromSQLCipher = LiveMigrationSource.table("message", inFile: "/path/to/old.db", encryption: .passphrase("old secret"))
/// ```
///
/// Two sources are equal when they name the same table of the same file; their keys are not compared.
public struct LiveMigrationSource: Sendable, Hashable {
    /// The source table's name.
    public let table: String
    /// The SQLite file the table is in; nil for the database itself.
    public let path: String?
    /// The source file's key: ``Encryption/none`` for a plaintext file (and for a same-file source).
    public let encryption: Encryption

    /// Table `name` of the database being migrated into: it is dropped once every row has moved.
    public static func table(_ name: String) -> LiveMigrationSource {
        LiveMigrationSource(table: name, path: nil, encryption: .none)
    }

    /// Table `name` of the SQLite file at `path`, plaintext unless `encryption` gives its passphrase or raw
    /// key. Coffer attaches the file to its connections and never writes it;
    /// ``LiveMigrationOptions/removesSourceFile`` deletes it once every row has moved.
    ///
    /// An encrypted file's settings are found from its key, as `coffer migrate` finds them: SQLCipher 1, 2 and
    /// 3 files and Coffer's own open on either library, SQLCipher 4's only when Coffer is built against
    /// SQLCipher 4 (see <doc:LiveMigration>).
    public static func table(_ name: String, inFile path: String, encryption: Encryption = .none) -> LiveMigrationSource {
        LiveMigrationSource(table: name, path: path, encryption: encryption)
    }

    public static func == (lhs: LiveMigrationSource, rhs: LiveMigrationSource) -> Bool {
        lhs.table == rhs.table && lhs.path == rhs.path
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(table)
        hasher.combine(path)
    }
}

/// How a live migration runs: its batches, which source rows it takes and how they map to columns.
///
/// ```swift
/// var options = LiveMigrationOptions()
/// options.batchSize = 500
/// options.filter = "deleted = 0"                        // SQL over the source's columns
/// options.columnExpressions = ["body": "coalesce(text, '')"]
/// ```
public struct LiveMigrationOptions: Sendable {
    /// The most rows one batch (one transaction) moves (default 1,000).
    public var batchSize = 1000
    /// How long one batch should hold the writer, in seconds, or nil (the default) for batches of
    /// ``batchSize`` rows. When set, the worker sizes each batch from the speed of the last ones so that
    /// it takes about this long (16…``batchSize`` rows), bounding how long an app write waits for one.
    /// Small batches cost a transaction each: on a busy writer the worker gets fewer turns, so the
    /// migration can slow down a lot (see <doc:LiveMigration>). ``LiveMigration/finishNow()`` uses
    /// ``batchSize``.
    public var batchDuration: TimeInterval?
    /// The longest an app's call waits for a batch that does not give way, in seconds (default 0.001).
    ///
    /// A batch gives way to the app's calls: when one queues for the writer, the batch's statement is
    /// interrupted, its transaction rolls back and the call goes in (the rows move again in a later
    /// batch). When no batch has committed for 20 ms (an app that writes all the time), the next batch
    /// does not give way: once it has held the writer this long with a call queued, it commits the rows
    /// it moved so far and lets the call in (it checks every 64 rows); 0 lets the call in after the
    /// current 64 rows. Figures in <doc:LiveMigration>.
    public var maximumAppWait: TimeInterval = 0.001
    /// Seconds the worker waits after each batch (default 0: the next batch queues behind the app's
    /// writes already waiting, so they interleave). ``LiveMigration/finishNow()`` ignores it.
    public var pauseBetweenBatches: TimeInterval = 0
    /// A condition over the source's columns, in SQL: rows for which it is not true are not part of the
    /// table and are never moved (they stay in a source file; a same-file source is dropped with them).
    public var filter: String?
    /// SQL over the source's columns that computes a column of the table, by column name; a column not
    /// named here is read from the source column of the same name.
    public var columnExpressions: [String: String] = [:]
    /// Whether the source file (and its `-wal`, `-shm` and `-journal`) is deleted once every row has moved.
    /// Ignored for a same-file source, which is dropped.
    public var removesSourceFile = false

    /// The defaults: batches of 1,000 rows, back to back, every source row, columns by name.
    public init() {}
}

/// How far a live migration is: rows moved of the source's rows when it was declared.
public struct LiveMigrationProgress: Sendable, Hashable {
    /// Source rows now in the table: moved by the worker, or moved early by a write that touched them
    /// (a row the app deleted counts as moved).
    public var movedRows: Int
    /// Source rows the migration takes (those that pass the filter).
    public var totalRows: Int
    /// True once every row has moved and the source was dropped or detached.
    public var isFinished: Bool

    /// Creates a progress value.
    public init(movedRows: Int, totalRows: Int, isFinished: Bool) {
        self.movedRows = movedRows
        self.totalRows = totalRows
        self.isFinished = isFinished
    }
}
