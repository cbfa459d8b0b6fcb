// SalvageSink — where salvaged rows go. The engine knows nothing about the output format: the Coffer
// writer, a test collector or a dry-run counter all implement this protocol.

/// Receives the salvaged tables and rows, in order: `begin` for a table before any of its rows, rows,
/// `tableTreesWalked` once every table's own tree has been read, more rows (orphans adopted into tables),
/// and `finish` once at the end (the place to create indexes, views and triggers).
public protocol SalvageSink {
    /// A table is about to receive rows (called once per table, including empty and inferred ones).
    mutating func begin(table: TableDescription) throws
    /// One row of `table`.
    mutating func insert(_ row: SalvagedRow, into table: TableDescription) throws
    /// Rows of `table`, in order: what ``SalvagePipeline`` delivers. The default inserts them one by one.
    mutating func insert(_ rows: [SalvagedRow], into table: TableDescription) throws
    /// Runs `body`, which delivers `begin` and rows (never `finish`) to `sink`, as one bulk
    /// load: a database writer can run it all in one transaction. The default just runs `body`.
    static func bulkLoad(into sink: inout Self, _ body: (inout Self) throws -> Void) throws
    /// Every table's own tree has been walked: the rows still to come, if any, are orphans adopted into a
    /// table or rows of inferred tables. A writer may start building indexes now and must undo that for a
    /// table that receives rows afterwards. Called once, before ``finish(schema:)``, inside the bulk load.
    /// The default does nothing.
    mutating func tableTreesWalked(schema: Schema) throws
    /// All rows have been delivered. `schema` holds every entry read from sqlite_master.
    mutating func finish(schema: Schema) throws
}

extension SalvageSink {
    /// Runs `body`.
    public static func bulkLoad(into sink: inout Self, _ body: (inout Self) throws -> Void) throws {
        try body(&sink)
    }

    /// Does nothing.
    public mutating func tableTreesWalked(schema: Schema) throws {}

    /// Inserts the rows one by one.
    public mutating func insert(_ rows: [SalvagedRow], into table: TableDescription) throws {
        for row in rows { try insert(row, into: table) }
    }
}

/// A sink that keeps every row in memory, keyed by table name. For tests and small files.
struct CollectingSink: SalvageSink {
    /// Tables in the order they were begun.
    private(set) var tables: [TableDescription] = []
    /// Rows per table name.
    private(set) var rows: [String: [SalvagedRow]] = [:]
    /// Whether `finish` was called.
    private(set) var finished = false

    /// An empty sink.
    init() {}

    /// Records the table.
    mutating func begin(table: TableDescription) throws {
        tables.append(table)
        rows[table.name, default: []] = rows[table.name] ?? []
    }

    /// Records the row.
    mutating func insert(_ row: SalvagedRow, into table: TableDescription) throws {
        rows[table.name, default: []].append(row)
    }

    /// Marks the sink finished.
    mutating func finish(schema: Schema) throws { finished = true }
}
