// RepairWriter — writes salvaged rows into a new database through Coffer.
//
// Order, and why:
// 1. `begin(table:)`: the table is created from its original CREATE TABLE sql. The sql comes from a
//    damaged file, so it runs as one statement under an authorizer that allows only that CREATE (see
//    ``UntrustedCreate``). A shadow table of a virtual table whose module the library has is not created:
//    the virtual table is (its module creates its shadow tables, emptied here), and the shadow rows go into
//    them (see RepairWriter+VirtualTables). Internal sqlite_* tables are not created; sqlite_sequence's rows
//    are kept and applied at the end, so AUTOINCREMENT continues where it stopped.
// 2. Rows are buffered (bounded by `batchSize`) and inserted in one transaction per batch or, from a
//    ``SalvagePipeline``, in batches inside one bulk-load transaction (`bulkLoad`). One prepared INSERT per
//    row shape; TEXT bound as raw bytes so non-UTF-8 text survives byte for byte. A row the new table
//    refuses (a constraint) is counted and skipped; the batch goes on. A failure of OUTPUT's storage fails
//    the repair. Foreign keys are not enforced while rows go in.
//    A table that cannot be created, or whose INSERT SQLite refuses, is named with the reason in
//    ``Outcome/issues``; its rows are counted as rejected and the other tables go on.
// 3. `tableTreesWalked`: the indexes of ordinary tables are built while the salvager still reads the
//    input's indexes (RepairWriter+EarlyIndexes); a table that gets rows after that loses them again.
// 4. `finish`: virtual tables that got no shadow rows, FTS checks, sqlite_sequence, the indexes not built
//    yet, then views, then triggers (each run as one authorized CREATE of its kind). Triggers come last so they never fire
//    on salvaged rows. user_version and application_id are copied when page 1 was readable.

import Coffer
import Foundation

/// A ``SalvageSink`` that writes into a new Coffer database.
///
/// ```swift
/// let writer = try RepairWriter(path: "recovered.db", encryption: .passphrase("secret"))
/// var sink = writer
/// let report = try Salvager(path: "broken.db", key: .passphrase("secret")).run(into: &sink)
/// print(report.rowsSalvaged)
/// ```
public final class RepairWriter: SalvageSink {
    /// What the writer did.
    struct Outcome: Sendable, Codable, Equatable {
        /// Tables created.
        var tablesCreated = 0
        /// Rows inserted.
        var rowsWritten = 0
        /// Rows the new database refused (constraint violations), or whose table could not be created.
        var rowsRejected = 0
        /// Names of schema objects (tables, indexes, views, triggers) whose SQL was refused or failed.
        var objectsFailed: [String] = []
        /// Names of schema objects created after the rows (indexes, views, triggers).
        var objectsCreated: [String] = []
        /// Virtual tables recreated in OUTPUT.
        var virtualTablesCreated: [String] = []
        /// Every object that did not come back as it was, with the reason.
        var issues: [SchemaIssue] = []
    }

    /// The output database.
    public let database: Database
    /// What the writer did so far.
    var outcome = Outcome()
    private let batchSize: Int
    private var pending: [(table: TableDescription, row: SalvagedRow)] = []
    /// Tables of OUTPUT that receive rows (ordinary tables created, shadow tables of recreated virtual tables).
    var created = Set<String>()
    /// Virtual tables recreated (or that failed to be), lowercased.
    var virtualTablesTried = Set<String>()
    /// sqlite_sequence rows salvaged, applied by `finish`.
    var sequences: [(name: String, value: Int64)] = []
    /// Asked before each table and each batch of rows: once it returns true, the writer throws
    /// `CancellationError` (the repair that owns OUTPUT then removes it). Nil: never asked.
    public var shouldStop: (@Sendable () -> Bool)?
    /// The writer connection while a bulk load holds its one transaction open.
    private var bulk: Connection?
    /// The flushes of the rows to disk, started while the indexes are built (see `bulkLoad` and
    /// RepairWriter+EarlyIndexes).
    let earlyFlush = DispatchGroup()
    /// Ordinary tables created from their CREATE TABLE (not virtual tables' shadow tables).
    var ordinaryTables = Set<String>()
    /// What `tableTreesWalked` did (RepairWriter+EarlyIndexes).
    var early = EarlyIndexes()

    /// Creates (or opens) the output database at `path`. It should not exist yet.
    public init(path: String, encryption: Encryption, cipher: CipherOptions = CipherOptions(), batchSize: Int = 5000) throws {
        var configuration = Configuration(encryption: encryption, cipher: cipher)
        configuration.readerCount = 0
        configuration.foreignKeysEnabled = false
        // Rebuilding an index sorts every entry: in encrypted temporary files the sort spills past the
        // page cache instead of holding the whole index in memory (431 MB → see the README's repair speed).
        configuration.temporaryStorage = .encryptedFiles
        database = try Database(path: path, configuration: configuration)
        self.batchSize = max(1, batchSize)
        // A bulk load into a file nobody else sees yet: the rollback journal stays in memory (statement
        // rollbacks still work, and nothing is written twice as it would be through a WAL), no fsync per
        // transaction, and a 16 MiB page cache, which also bounds each sorted run of an index build
        // (a 64 MiB cache was no faster on 274 MB and 2.1 GB files and peaked 100 MB higher). With a
        // second processor, the index builds sort their runs on a helper thread (`PRAGMA threads`) while
        // SQLite reads the table for the next run. `close()` restores WAL and fsyncs.
        let sortThreads = ProcessInfo.processInfo.activeProcessorCount > 1 ? 1 : 0
        try database.writeWithoutTransaction {
            try $0.executeScript(
                "PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA cache_size = -16384; "
                    + "PRAGMA threads = \(sortThreads);")
        }
    }

    /// Switches the output back to WAL, closes it and flushes it to disk, so that renaming it into place
    /// afterwards cannot expose a half-written file after a crash.
    public func close() throws {
        try database.writeWithoutTransaction { try $0.executeScript("PRAGMA journal_mode = WAL;") }
        try database.close()
        earlyFlush.wait()
        guard let file = ReadOnlyFile(path: database.path) else {
            throw CofferError(code: .cantOpen, message: "cannot reopen \(database.path) to flush it")
        }
        guard file.synchronize() else { throw CofferError(code: .ioError, message: "fsync \(database.path) failed") }
    }

    /// Creates the table from its original sql under the authorizer (or, for a shadow table, its virtual
    /// table).
    public func begin(table: TableDescription) throws {
        try checkStop()
        try flush()
        guard !table.name.lowercased().hasPrefix("sqlite_") else { return }
        if let virtual = table.virtualTable {
            try createVirtualTable(virtual)
            if created.contains(table.name) { return }
        }
        do {
            try onWriter { connection in
                try UntrustedCreate(kind: .table, name: table.name, table: table.name, sql: table.sql).run(on: connection)
            }
            created.insert(table.name)
            if table.virtualTable == nil { ordinaryTables.insert(table.name) }
            outcome.tablesCreated += 1
        } catch let error as CofferError where RepairWriter.outputFailed(error) {
            throw error  // the disk, not the sql: OUTPUT cannot be trusted, the repair must fail
        } catch {
            fail(kind: "table", name: table.name, reason: "not created: \(Self.reason(error))")
        }
    }

    /// Records that `name` did not come back as it was.
    func fail(kind: String, name: String, reason: String) {
        outcome.objectsFailed.append(name)
        outcome.issues.append(SchemaIssue(kind: kind, name: name, reason: reason))
    }

    /// Adds what the writer could not bring back to `report` (its ``RepairReport/schemaIssues``).
    public func annotate(_ report: inout RepairReport) {
        report.schemaIssues += outcome.issues
    }

    /// A short reason for a refused statement: SQLite's message.
    static func reason(_ error: any Error) -> String {
        (error as? CofferError)?.message ?? "\(error)"
    }

    /// Buffers the row; writes a batch when the buffer is full.
    public func insert(_ row: SalvagedRow, into table: TableDescription) throws {
        pending.append((table, row))
        if pending.count >= batchSize { try flush() }
    }

    /// Writes `rows` in one transaction (after any buffered rows).
    public func insert(_ rows: [SalvagedRow], into table: TableDescription) throws {
        try checkStop()
        try flush()
        try write(rows[...], into: table)
    }

    /// Writes remaining rows, then virtual tables, sqlite_sequence, indexes, views, triggers and header
    /// values.
    public func finish(schema: Schema) throws {
        try flush()
        for refused in schema.refusedTables { fail(kind: refused.kind, name: refused.name, reason: refused.reason) }
        try finishVirtualTables(schema)
        try restoreSequences()
        let order: [(SchemaEntryKind, UntrustedCreate.Kind)] = [(.index, .index), (.view, .view), (.trigger, .trigger)]
        for (kind, createKind) in order {
            for entry in schema.entries where entry.kind == kind {
                guard let sql = entry.sql else { continue }
                if kind == .index, settleEarlyIndex(entry) { continue }
                do {
                    try database.writeWithoutTransaction { connection in
                        try UntrustedCreate(kind: createKind, name: entry.name, table: entry.tableName, sql: sql)
                            .run(on: connection)
                    }
                    outcome.objectsCreated.append(entry.name)
                } catch let error as CofferError where RepairWriter.outputFailed(error) {
                    throw error
                } catch {
                    fail(kind: kind.rawValue, name: entry.name, reason: "not created: \(Self.reason(error))")
                }
            }
        }
        try dropEarlyIndexes(missingFrom: schema)
        if let userVersion = schema.userVersion {
            try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA user_version = \(userVersion)") }
        }
        if let applicationID = schema.applicationID {
            try database.writeWithoutTransaction { try $0.execute(sql: "PRAGMA application_id = \(applicationID)") }
        }
    }

    /// Runs `body` as one transaction: the rows of a pipelined salvage go in together. Pages spill to the
    /// file when the page cache fills, and the in-memory journal only holds pages that existed before (a
    /// few), so memory stays bounded; one commit instead of one per batch also keeps the B-tree's right
    /// edge from being encrypted and written again at every commit.
    public static func bulkLoad(into sink: inout RepairWriter, _ body: (inout RepairWriter) throws -> Void) throws {
        let writer = sink
        try writer.database.write { connection in
            writer.bulk = connection
            defer { writer.bulk = nil }
            try body(&sink)
        }
        // The rows are in the file but only in the OS cache (synchronous = OFF).
        writer.startFlush()
    }

    /// Starts flushing what OUTPUT's file holds to disk on another thread, while the writer goes on
    /// (building indexes), which leaves `close()`'s fsync little to wait for. The guarantee is still
    /// `close()`'s: this only starts the disk writes earlier.
    func startFlush() {
        let path = database.path
        DispatchQueue.global(qos: .utility).async(group: earlyFlush) {
            // A descriptor of the table's: the output database is open, and closing any other descriptor of
            // its file would drop its connections' locks.
            _ = ReadOnlyFile(path: path)?.synchronize()
        }
    }

    /// Runs `body` on the writer: inside the bulk load's transaction, or on its own.
    func onWriter<T>(_ body: (Connection) throws -> T) throws -> T {
        if let bulk { return try body(bulk) }
        return try database.writeWithoutTransaction(body)
    }

    /// Runs `body` in a transaction: the bulk load's, or a new one.
    private func inTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        if let bulk { return try body(bulk) }
        return try database.write(body)
    }

    /// Whether `error` is OUTPUT's storage failing (I/O, full disk, out of memory) rather than refused SQL.
    static func outputFailed(_ error: CofferError) -> Bool {
        [.ioError, .full, .noMemory, .readOnly, .cantOpen].contains(error.code.primary)
    }

    func checkStop() throws {
        if let shouldStop, shouldStop() { throw CancellationError() }
    }

    func flush() throws {
        guard !pending.isEmpty else { return }
        try checkStop()
        let batch = pending
        pending.removeAll(keepingCapacity: true)
        // Consecutive rows of one table go in together; `begin` flushes, so that is usually the whole batch.
        var start = 0
        while start < batch.count {
            let table = batch[start].table
            var end = start + 1
            while end < batch.count, batch[end].table.name == table.name { end += 1 }
            try write(batch[start..<end].lazy.map(\.row), into: table)
            start = end
        }
    }

    /// Inserts rows of one table in one transaction. A row the table refuses is counted and skipped; a
    /// failure of OUTPUT's storage fails the repair.
    private func write(_ rows: some Collection<SalvagedRow>, into table: TableDescription) throws {
        guard !rows.isEmpty else { return }
        if table.name.lowercased() == "sqlite_sequence" {
            keepSequences(rows)
            return
        }
        guard created.contains(table.name) else {
            outcome.rowsRejected += rows.count
            return
        }
        var written = 0
        var rejected = 0
        var refused: (any Error)?
        try dropEarlyIndexes(of: table.name)
        try inTransaction { connection in
            var statements: [InsertShape: Statement] = [:]
            var last: (shape: InsertShape, statement: Statement)?
            for row in rows {
                let withRowid = row.rowid != nil && table.rowidAliasColumn == nil
                let valueCount = min(row.values.count, table.columns.count) + (withRowid ? 1 : 0)
                let shape = InsertShape(valueCount: valueCount, withRowid: withRowid)
                let statement: Statement
                if let last, last.shape == shape {
                    statement = last.statement
                } else if let cached = statements[shape] {
                    statement = cached
                } else {
                    do {
                        statement = try connection.makeStatement(sql: Self.insertSQL(for: shape, table: table))
                    } catch let error as CofferError where RepairWriter.outputFailed(error) {
                        throw error
                    } catch {
                        // The table exists but refuses this INSERT: the table fails, the others go on.
                        refused = error
                        rejected += 1
                        continue
                    }
                    statements[shape] = statement
                }
                last = (shape, statement)
                do {
                    try Self.insert(row, withRowid: withRowid, columns: table.columns.count, statement: statement)
                    written += 1
                } catch let error as CofferError where RepairWriter.outputFailed(error) {
                    throw error
                } catch {
                    rejected += 1
                }
            }
        }
        outcome.rowsWritten += written
        outcome.rowsRejected += rejected
        if let refused, !outcome.objectsFailed.contains(table.name) {
            fail(kind: "table", name: table.name, reason: "rows refused: \(Self.reason(refused))")
        }
    }

    /// Keeps salvaged sqlite_sequence rows (name TEXT, seq INTEGER) for `restoreSequences`.
    private func keepSequences(_ rows: some Collection<SalvagedRow>) {
        for row in rows {
            guard row.values.count >= 2, case .text(let bytes) = row.values[0], case .integer(let value) = row.values[1],
                let name = String(validatingUTF8Bytes: bytes)
            else {
                outcome.rowsRejected += 1
                continue
            }
            sequences.append((name, value))
        }
    }

    /// Sets each salvaged AUTOINCREMENT counter in OUTPUT's sqlite_sequence (never lowering one the
    /// inserted rows raised), so new ids continue where they stopped. A counter of a table OUTPUT lacks
    /// is dropped.
    private func restoreSequences() throws {
        guard !sequences.isEmpty else { return }
        try database.write { connection in
            let exists = try connection.fetchValue(
                Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_sequence'")
            guard exists == 1 else {
                outcome.rowsRejected += sequences.count
                return
            }
            for (name, value) in sequences {
                guard created.contains(name) else {
                    outcome.rowsRejected += 1
                    continue
                }
                try connection.execute(
                    sql: "UPDATE sqlite_sequence SET seq = max(seq, ?2) WHERE name = ?1", arguments: [name, value])
                if connection.changesCount == 0 {
                    try connection.execute(
                        sql: "INSERT INTO sqlite_sequence(name, seq) VALUES (?1, ?2)", arguments: [name, value])
                }
                outcome.rowsWritten += 1
            }
        }
    }

    /// A row's INSERT statement depends on its value count and whether it binds the rowid: one prepared
    /// statement per shape per transaction, reused for every row of that shape.
    private struct InsertShape: Hashable {
        let valueCount: Int
        let withRowid: Bool
    }

    /// Binds the row (rowid first when the table has no alias column), runs the statement once, then resets
    /// it and clears its bindings. TEXT and BLOB go in as raw bytes, bound in place while the row's arrays
    /// are alive (no copy into SQLite).
    private static func insert(_ row: SalvagedRow, withRowid: Bool, columns: Int, statement: Statement) throws {
        var position: Int32 = 1
        var bytesBound = false
        do {
            if withRowid, let rowid = row.rowid {
                try statement.bind(.integer(rowid), toParameter: 1)
                position = 2
            }
            let values = row.values.prefix(columns)
            try statement.bindInPlace(values, from: values.startIndex, parameter: position, bytesBound: &bytesBound) {
                defer { statement.resetClearingBindings() }  // still inside every scope that lends bytes
                while try statement.step() {}
            }
        } catch {
            statement.resetClearingBindings()  // a bind failed before the step: nothing bound in place stays
            throw error
        }
    }

    private static func insertSQL(for shape: InsertShape, table: TableDescription) throws -> String {
        var names: [String] = []
        let columnNames = table.columns.map(\.name)
        if shape.withRowid {
            let lowered = Set(columnNames.map { $0.lowercased() })
            guard let alias = ["rowid", "_rowid_", "oid"].first(where: { !lowered.contains($0) }) else {
                throw CofferError(code: .misuse, message: "no rowid alias available")
            }
            names.append(alias)
        }
        names += columnNames.prefix(shape.valueCount - names.count).map(SQLIdentifier.quote)
        return "INSERT INTO \(SQLIdentifier.quote(table.name))(\(names.joined(separator: ", "))) VALUES ("
            + Array(repeating: "?", count: shape.valueCount).joined(separator: ", ") + ")"
    }
}
