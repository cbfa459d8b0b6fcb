import CSQLCipher
import CofferEngine
import CofferRecords

// Keeping an FTS4 index compact. Each write adds a small segment (b-tree) of terms; queries read every
// segment, so segments are merged: `optimize` into one (costly, all at once), `merge` a few pages at a
// time (FTS4's incremental merge), `rebuild` from the content table.

extension FullTextIndex {
    /// Empties the index and fills it again from the content table (after the index was damaged, or
    /// after rows were written with the triggers missing).
    public func rebuild(_ db: Connection) throws { try command(db, "rebuild") }

    /// Merges every segment into one: the fastest index to query, at the cost of rewriting all of it.
    public func optimize(_ db: Connection) throws { try command(db, "optimize") }

    /// Runs one step of FTS4's incremental merge: at most `pages` pages of segments written, merging
    /// levels holding at least `minimumSegments` segments. Returns false when there was nothing left
    /// to merge.
    ///
    /// ```swift
    /// try database.write { db in while try Message.fullTextIndex.merge(db, pages: 200) {} }
    /// ```
    @discardableResult
    public func merge(_ db: Connection, pages: Int = 200, minimumSegments: Int = 8) throws -> Bool {
        // FTS4's documented test: a merge step that changed fewer than two rows found no work.
        let before = sqlite3_total_changes(db.handle)
        try command(db, "merge=\(max(pages, 1)),\(max(minimumSegments, 2))")
        return sqlite3_total_changes(db.handle) - before >= 2
    }

    /// True when some level of the index holds at least `minimumSegments` segments, so that ``merge(_:pages:minimumSegments:)``
    /// has work (a read: run it on a reader).
    public func needsMerge(_ db: Connection, minimumSegments: Int = 8) throws -> Bool {
        let segments = try SQLIdentifier.validated(name + "_segdir")
        return try db.fetchValue(
            Bool.self,
            sql: "SELECT EXISTS (SELECT 1 FROM \(segments) GROUP BY level HAVING count(*) >= ?)",
            arguments: [max(minimumSegments, 2)]) ?? false
    }

    /// Checks that the index agrees with the content table; throws `CofferError.corrupt` when not.
    public func checkIntegrity(_ db: Connection) throws { try command(db, "integrity-check") }

    private func command(_ db: Connection, _ command: String) throws {
        let table = try SQLIdentifier.validated(name)
        try db.execute(sql: "INSERT INTO \(table)(\(table)) VALUES (?)", arguments: [command])
    }
}
