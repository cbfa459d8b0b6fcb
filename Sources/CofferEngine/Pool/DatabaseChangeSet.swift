/// What one committed transaction changed: the tables it wrote and, row by row, what it did to them.
///
/// ``Database/changes(in:)`` yields one per commit, in commit order. Rows come from SQLite's update hook,
/// so they cover rowid tables; a change SQLite does not report row by row (a schema change, `DELETE FROM t`
/// without `WHERE`, a `WITHOUT ROWID` table, a commit by another process) sets ``isWholeDatabase`` instead.
public struct DatabaseChangeSet: Sendable, Equatable {
    /// The commit's place among this database's commits, counted from 1 since the database was opened.
    public var sequence: UInt64
    /// The rows changed, in the order the transaction changed them.
    public var rows: [RowChange] {
        didSet { lowercasedTables = Self.lowercasedTables(of: rows) }
    }
    /// True when the commit may have changed anything: every observation re-fetches.
    public var isWholeDatabase: Bool
    /// True when the commit was made by another process (or another `Database` on the same file).
    public var isExternal: Bool
    /// Who tagged the transaction as theirs (``ObservationCenter/tagCurrentTransaction(_:)``): a key-value
    /// store's cache skips its own commits, which it has already accounted for.
    package var tags: Set<ObjectIdentifier> = []
    /// Tables (lower-cased) where an update may have changed a row's rowid (see ``UpdatedColumns``): their
    /// rows' ids say nothing about which rows are gone.
    var movedTables: Set<String> = []

    /// The changed tables' names, lower-cased, worked out once for the many observations that compare.
    package private(set) var lowercasedTables: Set<String>

    init(
        sequence: UInt64, rows: [RowChange], tables: Set<String>? = nil, movedTables: Set<String> = [], isWholeDatabase: Bool,
        isExternal: Bool, tags: Set<ObjectIdentifier> = []
    ) {
        self.sequence = sequence
        self.rows = rows
        self.isWholeDatabase = isWholeDatabase
        self.isExternal = isExternal
        self.tags = tags
        self.movedTables = movedTables
        self.lowercasedTables = tables ?? Self.lowercasedTables(of: rows)
    }

    static func lowercasedTables(of rows: [RowChange]) -> Set<String> {
        var tables: Set<String> = []
        var last: String?
        for row in rows where row.table != last {
            last = row.table
            tables.insert(row.table.lowercased())
        }
        return tables
    }

    /// The names of the tables whose rows changed.
    public var tables: Set<String> { Set(rows.map(\.table)) }

    /// True when this commit may have changed one of `tables` (compared ignoring ASCII case, as SQLite does).
    public func touches(_ tables: Set<String>) -> Bool {
        touches(lowercased: Set(tables.map { $0.lowercased() }))
    }

    /// ``touches(_:)`` for names already lower-cased: what each observation asks at each commit.
    package func touches(lowercased tables: Set<String>) -> Bool {
        isWholeDatabase || !lowercasedTables.isDisjoint(with: tables)
    }

    /// True when one of the rows changed in table `table` (lower-cased) passes `isRelevant`; a table whose
    /// rows may have moved is always relevant.
    package func touches(lowercased table: String, where isRelevant: (RowChange) -> Bool) -> Bool {
        guard lowercasedTables.contains(table) else { return false }
        if movedTables.contains(table) { return true }
        // Rows of one table come in runs: compare each run's name once.
        var lastName: String?
        var lastMatches = false
        for row in rows {
            if row.table != lastName {
                lastName = row.table
                lastMatches = row.table.lowercased() == table
            }
            if lastMatches && isRelevant(row) { return true }
        }
        return false
    }
}

/// One row a transaction inserted, updated or deleted.
public struct RowChange: Sendable, Hashable {
    /// What happened to a row.
    public enum Kind: Sendable, Hashable {
        /// The row was inserted.
        case insert
        /// The row was updated.
        case update
        /// The row was deleted.
        case delete
    }

    /// The table's name, as the schema spells it.
    public var table: String
    /// The row's rowid (its `INTEGER PRIMARY KEY`, if it has one).
    public var rowID: Int64
    /// What happened to it.
    public var kind: Kind
    /// For an update, the columns its statement (or a trigger it fired) assigns in this table,
    /// lower-cased; nil for inserts and deletes, and when they are not known (the row may then have
    /// changed anywhere).
    public var updatedColumns: Set<String>?

    /// A row change; `updatedColumns` as SQLite's authorizer names them.
    public init(table: String, rowID: Int64, kind: Kind, updatedColumns: Set<String>? = nil) {
        self.table = table
        self.rowID = rowID
        self.kind = kind
        self.updatedColumns = updatedColumns
    }
}
