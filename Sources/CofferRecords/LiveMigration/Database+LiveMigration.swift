import CSQLCipher
import CofferEngine
import Foundation

extension Database {
    /// Declares that the table of `Record` takes its rows from `source`, and starts moving them in the
    /// background. From the moment this returns the table reads as if it held every source row, on every
    /// connection; typed writes (insert, update, delete, upsert, `updateAll`, `deleteAll`) behave as they
    /// would on that union; a worker moves the rows in batches, then drops a same-file source or detaches
    /// a source file.
    ///
    /// The migration's progress is kept in this database, in the transactions that move the rows: after a
    /// crash, call this again after opening (with the same source) and it resumes where it stopped. Once
    /// done, calling it again returns a finished migration at once, so an app can make the call at every
    /// launch. The table is created from `Record`'s declaration when it does not exist.
    ///
    /// ```swift
    /// let database = try Database(path: path, configuration: Configuration(encryption: .passphrase(secret)))
    /// let migration = try database.migrateLive(Message.self, from: .table("message", inFile: plainPath))
    /// // the app reads and writes Message as usual meanwhile
    /// try migration.finishNow()
    /// ```
    ///
    /// Limits (see <doc:LiveMigration>): raw SQL reads of the table see the union but raw SQL writes to it
    /// fail (it is a view on every connection); the source must be a rowid table that nothing else writes
    /// meanwhile; a SQLCipher 4 source file needs Coffer built against SQLCipher 4.
    ///
    /// - Throws: ``CofferError/fileNotFound`` for a missing source file, ``CofferError/wrongPassphrase`` when an
    ///   encrypted source does not open with its ``LiveMigrationSource/encryption``, ``CofferError/notADatabase``
    ///   for a source the linked SQLCipher cannot read, ``CofferError/apiMisuse`` when the
    ///   source table is missing or has no rowid, when the table already migrates from another source, or
    ///   for an option that names no column; the SQLite error of a bad filter or column expression.
    @discardableResult
    public func migrateLive<Record: TableRecord>(
        _ type: Record.Type, from source: LiveMigrationSource, options: LiveMigrationOptions = LiveMigrationOptions()
    ) throws -> LiveMigration {
        guard !configuration.readOnly else {
            throw CofferError(code: .apiMisuse, message: "a live migration needs a writable database")
        }
        if source.path == nil && source.table == Record.tableName {
            throw CofferError(code: .apiMisuse, message: "\(Record.tableName) cannot migrate from itself")
        }
        guard options.batchSize > 0 else { throw CofferError(code: .apiMisuse, message: "batchSize must be positive") }
        guard let registry = LiveMigrationRegistry.of(self) else {
            throw CofferError(code: .apiMisuse, message: "the database keeps other per-connection state")
        }
        if let running = registry.migration(of: Record.tableName) {
            running.restartIfStopped()
            return running
        }
        let names = Record.columnDefinitions.map(\.name)
        if let unknown = options.columnExpressions.keys.first(where: { !names.contains($0) }) {
            throw CofferError(code: .apiMisuse, message: "\(Record.tableName) has no column '\(unknown)'")
        }
        let expressions = try names.map { try options.columnExpressions[$0] ?? ("s." + SQLIdentifier.validated($0)) }
        // Compressed columns are stored compressed as rows move, as a record's insert stores them; the
        // union view reads the source's values plain.
        let stored: [String]? =
            Record.hasCompressedColumns
            ? try Record.columnDefinitions.map { column in
                let name = try SQLIdentifier.validated(column.name)
                guard let compression = column.compression else { return name }
                let dictionary = try compression.dictionarySQL { try SQLIdentifier.validated($0) }
                return "coffer_compress(\(name), \(dictionary))"
            } : nil
        let integerKey = Record.integerPrimaryKeyColumn
        let schema = source.path == nil ? "main" : registry.newSchemaName()
        // The migration's state, when it was declared before (read again under the writer below).
        let known = source.path == nil ? nil : try? read { db in try LiveMigrationState.read(Record.tableName, db) }
        // A source file's key, found once (it stretches the passphrase) before the writer; not for a
        // migration already done, whose source is not attached again (and may be gone). A missing file is
        // reported by the attachment.
        let fileKey = try source.path.flatMap { path -> AttachedFileKey? in
            guard known?.isDone != true, FileManager.default.fileExists(atPath: path) else { return nil }
            if source.encryption.isEncrypted { return try AttachedFileKey.detect(path: path, encryption: source.encryption) }
            if AttachedFileKey.isPlaintext(path: path) == false {
                throw CofferError(
                    code: .notADatabase,
                    message:
                        "\(path) is not a plaintext SQLite file: give its key (LiveMigrationSource.table(_:inFile:encryption:))")
            }
            return nil
        }
        let attachment = source.path.map { LiveMigrationRegistry.Attachment(schema: schema, path: $0, key: fileKey) }

        // A new migration from a file counts the source's rows on a connection of its own first: the count
        // reads the whole table (12 ms for W13's 200,000 rows), and under the writer it held up every
        // write of the app. Nothing writes a source (see Limits), so the count stays true; under the
        // writer only its rowid bounds are checked (nil when it failed: then the writer counts).
        let counted = source.path.flatMap { path -> SourceExtent? in
            guard known == nil else { return nil }
            return sourceExtent(ofTable: source.table, inFile: path, key: fileKey, filter: options.filter)
        }
        let (state, union) = try writeWithoutTransaction { db -> (LiveMigrationState, LiveMigrationTable) in
            let existing = try db.inTransaction(.immediate) { () -> LiveMigrationState? in
                try LiveMigrationState.createTables(db)
                return try LiveMigrationState.read(Record.tableName, db)
            }
            if let existing, existing.sourceTable != source.table || existing.sourcePath != source.path {
                throw CofferError(
                    code: .apiMisuse,
                    message:
                        "\(Record.tableName) already migrates from \(existing.sourceTable) of \(existing.sourcePath ?? "this file")"
                )
            }
            if let existing, existing.isDone {
                let union = try LiveMigrationTable(
                    target: Record.tableName, sourceSchema: schema, sourceTable: source.table, columnNames: names,
                    expressions: expressions, filter: options.filter, lastRowID: existing.lastRowID, integerKey: integerKey,
                    stored: stored)
                return (existing, union)
            }
            if let attachment { try LiveMigrationRegistry.attach(attachment, db) }
            defer { if source.path != nil { try? db.execute(sql: "DETACH DATABASE " + SQLIdentifier.quote(schema)) } }
            return try db.inTransaction(.immediate) {
                let state =
                    try existing
                    ?? Self.newLiveMigrationState(
                        Record.self, source, schema: schema, options, counted: counted, db)
                let union = try LiveMigrationTable(
                    target: Record.tableName, sourceSchema: schema, sourceTable: source.table, columnNames: names,
                    expressions: expressions, filter: options.filter, lastRowID: state.lastRowID, integerKey: integerKey,
                    stored: stored)
                // A bad filter or column expression fails here, not in every later read.
                _ = try db.fetchAll(sql: union.unmovedSelect + " LIMIT 0")
                return (state, union)
            }
        }
        if state.isDone {
            // Done before the last close, perhaps killed before the source was let go of: finish that.
            if !state.isCleaned {
                try writeWithoutTransaction { db in try LiveMigrationState.cleanUp(Record.tableName, db) }
                if options.removesSourceFile, let path = source.path { LiveMigration.removeFile(path) }
            }
            var finished = state.progress
            finished.isFinished = true
            return LiveMigration(database: self, union: union, source: source, options: options, progress: finished)
        }
        let migration = LiveMigration(database: self, union: union, source: source, options: options, progress: state.progress)
        registry.add(.init(table: union, attachment: attachment, migration: migration))
        migration.start()
        return migration
    }

    /// The extent of table `table` of the source file at `path` (keyed by `key` when encrypted), read on a
    /// connection of its own (opened read-write without create, as ATTACH opens it; it never writes); nil
    /// when the file, the table or the filter fails, for the writer to report.
    private func sourceExtent(ofTable table: String, inFile path: String, key: AttachedFileKey?, filter: String?)
        -> SourceExtent?
    {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let connection = try? Connection(path: path, flags: SQLITE_OPEN_READWRITE, logger: configuration.logger) else {
            return nil
        }
        defer { connection.close() }
        if let key { guard (try? connection.key(with: key)) != nil else { return nil } }
        return try? connection.inTransaction(.deferred) {
            let reference = "main." + (try SQLIdentifier.validated(table))
            return try SourceExtent.count(
                reference, filter: filter, bounds: SourceExtent.bounds(of: reference, connection), connection)
        }
    }

    /// The state row of a new migration: the source's rowid range and row count (`counted`'s, when its
    /// rowid range is still the source's), the table created if missing.
    private static func newLiveMigrationState<Record: TableRecord>(
        _ type: Record.Type, _ source: LiveMigrationSource, schema: String, _ options: LiveMigrationOptions,
        counted: SourceExtent?, _ db: Connection
    ) throws -> LiveMigrationState {
        let quotedSchema = try SQLIdentifier.validated(schema)
        let sourceReference = quotedSchema + "." + (try SQLIdentifier.validated(source.table))
        let kind = try db.fetchValue(
            String.self, sql: "SELECT sql FROM \(quotedSchema).sqlite_master WHERE type = 'table' AND name = ?",
            arguments: [source.table])
        guard let kind else {
            throw CofferError(code: .apiMisuse, message: "no table \(source.table) in the live migration's source")
        }
        if kind.uppercased().contains("WITHOUT ROWID") {
            throw CofferError(code: .apiMisuse, message: "\(source.table) has no rowid: a live migration reads in rowid order")
        }
        let exists = try db.fetchValue(
            Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE type = 'table' AND name = ?",
            arguments: [Record.tableName])
        if exists == 0 { try db.execute(sql: try Record.createTableSQL()) }
        let bounds = try SourceExtent.bounds(of: sourceReference, db)
        let extent =
            try counted.flatMap { $0.first == bounds.first && $0.last == bounds.last ? $0 : nil }
            ?? SourceExtent.count(sourceReference, filter: options.filter, bounds: bounds, db)
        let (first, last, total) = (extent.first, extent.last, extent.total)
        let watermark = (first ?? 1) == Int64.min ? Int64.min : (first ?? 1) - 1
        let state = LiveMigrationState(
            sourcePath: source.path, sourceTable: source.table, watermark: watermark, lastRowID: last ?? watermark,
            movedRows: 0, totalRows: total, isDone: false, isCleaned: false)
        try state.insert(Record.tableName, db)
        return state
    }
}
