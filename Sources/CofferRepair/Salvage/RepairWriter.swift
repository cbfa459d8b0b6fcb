// RepairWriter — writes salvaged rows into a new database through Coffer.
//
// Order, and why:
// 1. `begin(table:)`: the table is created from its original CREATE TABLE sql. The sql comes from a
//    damaged file, so it is checked before it runs: it must tokenize as CREATE TABLE (not TEMP) and is
//    prepared as exactly one statement (Coffer's Statement refuses any trailing SQL). Internal sqlite_*
//    tables are not created (sqlite_sequence is rebuilt by AUTOINCREMENT inserts).
// 2. Rows are buffered (bounded by `batchSize`) and inserted in one transaction per batch or, from a
//    ``SalvagePipeline``, in batches inside one bulk-load transaction (`bulkLoad`). One prepared INSERT per
//    row shape; TEXT bound as raw bytes so non-UTF-8 text survives byte for byte. A row the new table
//    refuses (a constraint) is counted and skipped; the batch goes on. A failure of OUTPUT's storage fails
//    the repair. Foreign keys are not enforced while rows go in.
// 3. `finish`: indexes, then views, then triggers (each checked the same way: CREATE [UNIQUE] INDEX,
//    CREATE VIEW, CREATE TRIGGER, one statement). Triggers come last so they never fire on salvaged rows.
//    user_version and application_id are copied when page 1 was readable.

import Coffer
import Foundation

/// A ``SalvageSink`` that writes into a new Coffer database.
///
/// ```swift
/// let writer = try RepairWriter(path: "recovered.db", encryption: .passphrase("secret"))
/// var sink = writer
/// let report = try Salvager(path: "broken.db", key: .passphrase("secret")).run(into: &sink)
/// print(writer.outcome.rowsWritten)
/// ```
public final class RepairWriter: SalvageSink {
    /// What the writer did.
    public struct Outcome: Sendable, Codable, Equatable {
        /// Tables created.
        public var tablesCreated = 0
        /// Rows inserted.
        public var rowsWritten = 0
        /// Rows the new database refused (constraint violations), or whose table could not be created.
        public var rowsRejected = 0
        /// Names of schema objects (tables, indexes, views, triggers) whose SQL was refused or failed.
        public var objectsFailed: [String] = []
        /// Names of schema objects created after the rows (indexes, views, triggers).
        public var objectsCreated: [String] = []
    }

    /// The output database.
    public let database: Database
    /// What the writer did so far.
    public private(set) var outcome = Outcome()
    private let batchSize: Int
    private var pending: [(table: TableDescription, row: SalvagedRow)] = []
    private var created = Set<String>()
    /// The writer connection while a bulk load holds its one transaction open.
    private var bulk: Connection?
    /// The flush of the bulk-loaded rows to disk, started while the indexes are built (see `bulkLoad`).
    private let earlyFlush = DispatchGroup()

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
        // transaction, and a 64 MiB page cache for the index builds. `close()` restores WAL and fsyncs.
        try database.writeWithoutTransaction {
            try $0.executeScript("PRAGMA journal_mode = MEMORY; PRAGMA synchronous = OFF; PRAGMA cache_size = -65536;")
        }
    }

    /// Switches the output back to WAL, closes it and flushes it to disk, so that renaming it into place
    /// afterwards cannot expose a half-written file after a crash.
    public func close() throws {
        try database.writeWithoutTransaction { try $0.executeScript("PRAGMA journal_mode = WAL;") }
        try database.close()
        earlyFlush.wait()
        guard let handle = FileHandle(forUpdatingAtPath: database.path) else {
            throw CofferError(code: .cantOpen, message: "cannot reopen \(database.path) to flush it")
        }
        defer { try? handle.close() }
        try handle.synchronize()
    }

    /// Creates the table from its original sql, after checking it.
    public func begin(table: TableDescription) throws {
        try flush()
        guard !table.name.lowercased().hasPrefix("sqlite_") else { return }
        guard RepairWriter.isStatement(table.sql, kinds: [["CREATE", "TABLE"]]), CreateTableParser.parse(table.sql) != nil else {
            outcome.objectsFailed.append(table.name)
            return
        }
        do {
            try onWriter { connection in
                let statement = try connection.makeStatement(sql: table.sql)
                try statement.step()
            }
            created.insert(table.name)
            outcome.tablesCreated += 1
        } catch let error as CofferError where RepairWriter.outputFailed(error) {
            throw error  // the disk, not the sql: OUTPUT cannot be trusted, the repair must fail
        } catch {
            outcome.objectsFailed.append(table.name)
        }
    }

    /// Buffers the row; writes a batch when the buffer is full.
    public func insert(_ row: SalvagedRow, into table: TableDescription) throws {
        pending.append((table, row))
        if pending.count >= batchSize { try flush() }
    }

    /// Writes `rows` in one transaction (after any buffered rows).
    public func insert(_ rows: [SalvagedRow], into table: TableDescription) throws {
        try flush()
        try write(rows[...], into: table)
    }

    /// Writes remaining rows, then indexes, views, triggers and header values.
    public func finish(schema: Schema) throws {
        try flush()
        let order: [(SchemaEntryKind, [[String]])] = [
            (.index, [["CREATE", "INDEX"], ["CREATE", "UNIQUE", "INDEX"]]),
            (.view, [["CREATE", "VIEW"]]),
            (.trigger, [["CREATE", "TRIGGER"]]),
        ]
        for (kind, prefixes) in order {
            for entry in schema.entries where entry.kind == kind {
                guard let sql = entry.sql else { continue }
                guard RepairWriter.isStatement(sql, kinds: prefixes) else {
                    outcome.objectsFailed.append(entry.name)
                    continue
                }
                do {
                    try database.writeWithoutTransaction { connection in
                        _ = try connection.makeStatement(sql: sql).step()
                    }
                    outcome.objectsCreated.append(entry.name)
                } catch let error as CofferError where RepairWriter.outputFailed(error) {
                    throw error
                } catch {
                    outcome.objectsFailed.append(entry.name)
                }
            }
        }
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
        // The rows are in the file but only in the OS cache (synchronous = OFF). Flushing them now, on another
        // thread while `finish` builds the indexes, leaves `close()`'s fsync little to wait for. The
        // guarantee is still `close()`'s: this only starts the disk writes earlier.
        let path = writer.database.path
        DispatchQueue.global(qos: .utility).async(group: writer.earlyFlush) {
            guard let handle = FileHandle(forUpdatingAtPath: path) else { return }
            try? handle.synchronize()
            try? handle.close()
        }
    }

    /// Runs `body` on the writer: inside the bulk load's transaction, or on its own.
    private func onWriter<T>(_ body: (Connection) throws -> T) throws -> T {
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

    /// Whether `sql` starts with one of the keyword sequences.
    static func isStatement(_ sql: String, kinds: [[String]]) -> Bool {
        guard let tokens = CreateTableParser.tokenize(sql) else { return false }
        let upper = tokens.prefix(3).map { $0.uppercased() }
        return kinds.contains { upper.starts(with: $0) }
    }

    private func flush() throws {
        guard !pending.isEmpty else { return }
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
        guard created.contains(table.name) else {
            outcome.rowsRejected += rows.count
            return
        }
        var written = 0
        var rejected = 0
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
                    statement = try connection.makeStatement(sql: Self.insertSQL(for: shape, table: table))
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
    }

    /// A row's INSERT statement depends on its value count and whether it binds the rowid: one prepared
    /// statement per shape per transaction, reused for every row of that shape.
    private struct InsertShape: Hashable {
        let valueCount: Int
        let withRowid: Bool
    }

    /// Binds the row (rowid first when the table has no alias column; TEXT and BLOB as raw bytes) and runs
    /// the statement once.
    private static func insert(_ row: SalvagedRow, withRowid: Bool, columns: Int, statement: Statement) throws {
        defer { statement.reset() }
        var position = 1
        if withRowid, let rowid = row.rowid {
            try statement.bind(.integer(rowid), toParameter: position)
            position += 1
        }
        for value in row.values.prefix(columns) {
            switch value {
            case .null: try statement.bind(.null, toParameter: position)
            case .integer(let number): try statement.bind(.integer(number), toParameter: position)
            case .real(let number): try statement.bind(.real(number), toParameter: position)
            case .blob(let bytes): try bytes.withUnsafeBytes { try statement.bindBlob(bytes: $0, toParameter: position) }
            case .text(let bytes): try bytes.withUnsafeBytes { try statement.bindText(bytes: $0, toParameter: position) }
            }
            position += 1
        }
        while try statement.step() {}
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
