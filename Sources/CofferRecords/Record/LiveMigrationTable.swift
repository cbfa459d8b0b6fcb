import CofferEngine

/// A table being filled by a live migration, as the connections that read it see it (the
/// `LiveMigration` folder declares it and moves the rows; the write paths of this folder use it).
///
/// While a table `T` takes its rows from a source table `S`, every connection of the database has a
/// TEMP VIEW named `T`: `main."T" UNION ALL` the rows of `S` not moved yet. SQLite looks a name up in
/// `temp` before `main`, so every read of `T` — typed queries, associations, the record cache, raw SQL —
/// reads the union. Writes cannot go to a view: the typed write paths write `main."T"` instead, after
/// moving the source rows the statement may touch (``moveRows(where:arguments:_:)``), in the same
/// transaction, so that an update changes the moved row and a delete leaves nothing behind to move later.
///
/// The state that says which source rows are still to come lives in `main`, committed with the rows:
/// `coffer_live_migration.watermark` (every source rowid at or below it was moved) and
/// `coffer_live_migration_moved` (rowids above it moved out of order).
package final class LiveMigrationTable: Sendable {
    /// The target table's name.
    package let target: String
    /// `main."T"`: where writes go while the union view hides the table.
    package let writeTable: String
    /// The target's quoted column names, in declaration order.
    package let columns: String
    /// What a move stores from a row of the source's projection (whose columns have the target's names):
    /// ``columns``, with each compressed column as `coffer_compress("c", dictionary)` — compressed as a
    /// record's insert stores it. The union view reads the projection plain.
    package let storedColumns: String
    /// The source rows not moved yet, with their rowid as `coffer_source_rowid` and each target column
    /// under its own name: `(SELECT s.rowid AS coffer_source_rowid, … FROM "src"."S" AS s WHERE …)`.
    package let unmovedSource: String
    /// The arm of the union view that reads the source: `SELECT … FROM "src"."S" AS s WHERE …`.
    let unmovedSelect: String
    /// The worker's batch: the unmoved source rows with `?1 < rowid <= ?2`, each target column under its
    /// own name. Both bounds are parameters of the rowid range itself, so SQLite reads only the batch
    /// (through ``unmovedSource`` the batch's bound was a filter over every row left to move).
    package let batchSelect: String
    /// ``batchSelect`` without the check against the moved set, for a batch that found no source row
    /// above the watermark moved out of order (the check was a B-tree probe for every row).
    package let batchSelectNoneMovedAhead: String
    /// The target's single INTEGER PRIMARY KEY column, quoted (a rowid alias), if it has one.
    let integerKey: String?
    /// `"schema"."S"`: the source table.
    package let sourceReference: String
    /// The source's largest rowid when the migration was declared: rows above it are not migrated.
    package let lastRowID: Int64

    /// The state table: one row per target table.
    package static let stateTable = "main.coffer_live_migration"
    /// Source rowids above the watermark that were moved out of order (or moved and then deleted).
    package static let movedTable = "main.coffer_live_migration_moved"

    /// - Parameters:
    ///   - sourceSchema: `main` (same file) or the schema the source file is attached as.
    ///   - expressions: the SQL that computes each target column from a source row, in column order.
    ///   - filter: a condition over the source's columns; rows that fail it are not part of the target.
    ///   - lastRowID: the source's largest rowid when the migration was declared.
    ///   - stored: per column, the SQL that stores it from the projected value of the same name, or nil
    ///     when every column is stored as it is projected.
    package init(
        target: String, sourceSchema: String, sourceTable: String, columnNames: [String], expressions: [String],
        filter: String?, lastRowID: Int64, integerKey: String?, stored: [String]? = nil
    ) throws {
        self.target = target
        let quotedTarget = try SQLIdentifier.validated(target)
        writeTable = "main." + quotedTarget
        let quotedColumns = try columnNames.map { try SQLIdentifier.validated($0) }
        columns = quotedColumns.joined(separator: ", ")
        storedColumns = stored?.joined(separator: ", ") ?? columns
        let literal = Self.literal(target)
        let filtered = filter.map { " AND (\($0))" } ?? ""
        let unmoved =
            " AND NOT EXISTS (SELECT 1 FROM \(Self.movedTable) AS m WHERE m.target = \(literal) AND m.source_rowid = s.rowid)"
            + filtered
        let condition =
            "s.rowid > (SELECT watermark FROM \(Self.stateTable) WHERE target = \(literal)) AND s.rowid <= \(lastRowID)"
            + unmoved
        let projection = zip(expressions, quotedColumns).map { "\($0) AS \($1)" }.joined(separator: ", ")
        sourceReference = (try SQLIdentifier.validated(sourceSchema)) + "." + (try SQLIdentifier.validated(sourceTable))
        self.lastRowID = lastRowID
        let from = " FROM " + sourceReference + " AS s WHERE " + condition
        unmovedSelect = "SELECT " + projection + from
        unmovedSource = "(SELECT s.rowid AS coffer_source_rowid, " + projection + from + ")"
        let batchRange = "SELECT " + projection + " FROM " + sourceReference + " AS s WHERE s.rowid > ?1 AND s.rowid <= ?2"
        // Compressed columns: the batch's projection read as a subquery (SQLite flattens it) and stored.
        let storedList = storedColumns
        let storing = { (select: String) in stored == nil ? select : "SELECT \(storedList) FROM (\(select))" }
        batchSelect = storing(batchRange + unmoved)
        batchSelectNoneMovedAhead = storing(batchRange + filtered)
        self.integerKey = try integerKey.map { try SQLIdentifier.validated($0) }
    }

    /// A string as an SQL literal (views and triggers take no parameters).
    package static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// `CREATE TEMP VIEW "T" AS …`: the union every read of `T` on a connection sees.
    package var createViewSQL: String {
        get throws {
            "CREATE TEMP VIEW IF NOT EXISTS " + (try SQLIdentifier.validated(target)) + " AS SELECT " + columns + " FROM "
                + writeTable + " UNION ALL " + unmovedSelect
        }
    }

    /// Moves the source rows not moved yet for which `condition` (over the target's column names, with
    /// `?` placeholders for `arguments`) holds into `main."T"`, and records them as moved. Runs inside the
    /// caller's transaction; returns the number of rows moved.
    @discardableResult
    package func moveRows(where condition: String, arguments: [DatabaseValue], _ db: Connection) throws -> Int {
        let selected = " FROM " + unmovedSource + " WHERE " + condition
        try db.execute(
            sql: "INSERT INTO " + writeTable + " (" + columns + ") SELECT " + storedColumns + selected,
            arguments: StatementArguments(arguments))
        let moved = db.changesCount
        guard moved > 0 else { return 0 }
        try db.execute(
            sql: "INSERT INTO \(Self.movedTable) (target, source_rowid) SELECT \(Self.literal(target)), coffer_source_rowid"
                + selected,
            arguments: StatementArguments(arguments))
        try db.execute(
            sql: "UPDATE \(Self.stateTable) SET moved_rows = moved_rows + ? WHERE target = ?",
            arguments: [moved, target])
        return moved
    }

    /// Before an insert that lets SQLite choose the integer key: moves the source row with the largest key
    /// still to come when it is above every key of `main."T"`, so that the key SQLite picks (one more than
    /// the largest) cannot be one a source row will bring later.
    func reserveIntegerKey(_ db: Connection) throws {
        guard let integerKey else { return }
        guard
            let top = try db.fetchValue(
                Int64.self, sql: "SELECT \(integerKey) FROM \(unmovedSource) ORDER BY \(integerKey) DESC LIMIT 1")
        else { return }
        let largest = try db.fetchValue(Int64.self, sql: "SELECT max(rowid) FROM \(writeTable)") ?? Int64.min
        if top > largest { try moveRows(where: "\(integerKey) = ?", arguments: [.integer(top)], db) }
    }
}

extension Connection {
    /// The live migration filling `table`, when this connection reads it through a union view.
    func liveMigration(of table: String) -> LiveMigrationTable? {
        liveMigrationEntry(for: table) as? LiveMigrationTable
    }
}
