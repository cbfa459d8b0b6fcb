import CofferEngine
import CofferRecords
internal import CofferTokenizer

// Inserting many rows of a table with a full-text index, with the index written in one segment.
//
// FTS4 flushes its pending terms into a new segment whenever a statement savepoint opens, and SQLite
// opens one for every INSERT that fires a trigger writing to a virtual table: through the AFTER INSERT
// trigger, each row is its own segment, and the index pays for writing and merging them. A trigger that
// does not fire costs too: a table with any trigger makes SQLite open a statement journal for each INSERT
// in a transaction, and SQLCipher encrypts each page image written to it (about one page a row, as many
// page encryptions again as the whole index writes). So `insertAll`, when the table's only triggers are
// the index's own, inserts its rows with the connection's triggers off (`SQLITE_DBCONFIG_ENABLE_TRIGGER`,
// inside its savepoint, turned back on on every path), then indexes them itself with single-row
// `INSERT`s into the FTS table (no trigger, no statement savepoint), which FTS4 keeps pending until the
// next savepoint or the commit. Every other write, raw SQL included, still goes through the triggers.
// (The triggers' `coffer_fulltext_pause` test, which `insertAll` used before, stays in the schema: files
// made since compare their triggers' SQL with it.)

extension FullTextSearchable {
    /// Inserts many records through one prepared statement, atomically (in a savepoint), and indexes
    /// them in one pass; returns the rowid of each (0 for a row that `.ignore` skipped).
    ///
    /// Same result as ``TableRecord/insertAll(_:_:onConflict:)``; it indexes the rows as one FTS4
    /// segment instead of one per row, so writing and querying the index cost less. `.replace` and a
    /// table whose own conflict clauses may replace (either may delete rows, whose index entries only the
    /// DELETE trigger removes), and tables with triggers other than the index's own, take the per-row path.
    ///
    /// ```swift
    /// try database.write { db in try Message.insertAll(messages, db) }
    /// ```
    @discardableResult
    public static func insertAll(
        _ records: some Sequence<Self>, _ db: Connection, onConflict resolution: ConflictResolution = .abort
    ) throws -> [Int64] {
        try db.savepoint {
            let index = fullTextIndex
            let positions = index.columnNames.compactMap { name in columnDefinitions.firstIndex { $0.name == name } }
            var batch: FullTextBatch?
            if resolution != .replace, positions.count == index.columnNames.count, try index.ownsTriggers(db),
                try !index.contentMayReplace(db)
            {
                batch = try FullTextBatch(index, positions, db)
            }
            defer { batch?.restoreTriggers(db) }
            let rowIDs = try insertEach(
                records, db, resolution,
                willInsert: { values in
                    if batch != nil, !positions.allSatisfy({ values[$0].isTextOrNull }) {
                        // FTS4 would index a number as its text, the content table may keep it otherwise.
                        try batch?.finish(db)
                        batch = nil
                    }
                },
                didInsert: { rowID, values in
                    if rowID != 0 { batch?.add(rowID: rowID, values: values) }
                })
            try batch?.finish(db)
            return rowIDs
        }
    }
}

/// The rows `insertAll` inserted while the index's AFTER INSERT trigger stood aside.
private struct FullTextBatch {
    let insertSQL: String
    let positions: [Int]
    var rows: [(rowID: Int64, values: [DatabaseValue])] = []
    /// Whether the batch turned the connection's triggers off and has not turned them back on.
    private var triggersOff = false

    /// Nil when the connection's triggers are off already (its rows are then indexed by nothing) or
    /// cannot be turned off.
    init?<Root>(_ index: FullTextIndex<Root>, _ positions: [Int], _ db: Connection) throws {
        self.positions = positions
        let columns = try index.columnNames.map { try SQLIdentifier.validated($0) }
        insertSQL =
            "INSERT INTO \(try SQLIdentifier.validated(index.name))(\(index.engine.rowidColumn), "
            + columns.joined(separator: ", ") + ") VALUES (?"
            + String(repeating: ", ?", count: columns.count) + ")"
        guard coffer_fts_set_triggers(db.handle, -1) == 1 else { return nil }
        triggersOff = true
        guard coffer_fts_set_triggers(db.handle, 0) == 0 else {
            restoreTriggers(db)
            return nil
        }
    }

    /// Turns the connection's triggers back on, once.
    mutating func restoreTriggers(_ db: Connection) {
        guard triggersOff else { return }
        triggersOff = false
        _ = coffer_fts_set_triggers(db.handle, 1)
    }

    mutating func add(rowID: Int64, values: [DatabaseValue]) {
        rows.append((rowID, positions.map { values[$0] }))
    }

    mutating func finish(_ db: Connection) throws {
        restoreTriggers(db)
        let statement = try db.cachedStatement(sql: insertSQL)
        for row in rows { try statement.execute(StatementArguments([.integer(row.rowID)] + row.values)) }
        rows = []
    }
}

extension FullTextIndex {
    /// True when the content table's triggers are exactly this index's current four, so that rows
    /// inserted while the AFTER INSERT one stands aside have no other effect to miss (and a file not yet
    /// upgraded, whose trigger ignores the pause, is not indexed twice).
    /// Whether the content table's declaration mentions REPLACE (an `ON CONFLICT REPLACE` clause, or
    /// only a name containing the word: a false yes costs the per-row path, never a stale index).
    func contentMayReplace(_ db: Connection) throws -> Bool {
        let sql = try db.fetchValue(
            String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE",
            arguments: [Root.tableName])
        return sql?.range(of: "replace", options: .caseInsensitive) != nil
    }

    func ownsTriggers(_ db: Connection) throws -> Bool {
        let found = try db.fetchAll(
            sql: """
                SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE
                UNION ALL SELECT name, sql FROM sqlite_temp_master WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE
                """,
            arguments: [Root.tableName])
        let expected = try triggers
        guard found.count == expected.count else { return false }
        return expected.allSatisfy { trigger in
            found.contains { $0["name"] == trigger.name && $0["sql"] == trigger.sql }
        }
    }
}

extension DatabaseValue {
    fileprivate var isTextOrNull: Bool {
        switch self {
        case .text, .null: return true
        default: return false
        }
    }
}
