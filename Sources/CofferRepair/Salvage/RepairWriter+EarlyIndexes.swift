// RepairWriter+EarlyIndexes — building the indexes while the salvager still reads the input.
//
// Why: once every table's own tree has been walked, the salvager still walks each index of the input (to
// claim its pages) and scans the unclaimed pages for orphans, reading and authenticating every index
// page on its thread. Building OUTPUT's indexes only at `finish` left the writer idle through that walk
// (about an eighth of a repair of a table with one index on text). At `tableTreesWalked` the writer builds
// them instead, inside the bulk load's transaction, while the walk runs.
//
// The result is the same as building them at `finish`: an index is built from all of its table's rows.
// - A table that receives rows after `tableTreesWalked` (an orphan adopted into it) has its early
//   indexes dropped before those rows go in; `finish` builds them again, after every row. So a UNIQUE
//   index still refuses or accepts exactly the rows it would have, and no row is refused by an index.
// - An index whose early build fails keeps its reason; `finish` reports it as before unless its table
//   got rows afterwards, in which case `finish` tries again.
// - Only indexes of ordinary tables are built early (not of a virtual table's shadow tables, which
//   `finish` may still fill), and an index the final schema no longer names is dropped.
// - Meanwhile the rows written so far start going to disk on another thread, as `bulkLoad` does after
//   its commit; `close()` still fsyncs.

import Coffer
import Foundation

extension RepairWriter {
    /// What `tableTreesWalked` built, and what it could not.
    struct EarlyIndexes {
        /// Index names built early, by table name, in schema order.
        var built: [String: [String]] = [:]
        /// Index name → (table name, reason) for early builds SQLite refused.
        var failed: [String: (table: String, reason: String)] = [:]
    }

    /// Builds the indexes of the ordinary tables created so far (see the file comment).
    public func tableTreesWalked(schema: Schema) throws {
        try flush()
        startFlush()
        for entry in schema.indexes where ordinaryTables.contains(entry.tableName) {
            guard let sql = entry.sql else { continue }
            try checkStop()
            do {
                try onWriter { connection in
                    try UntrustedCreate(kind: .index, name: entry.name, table: entry.tableName, sql: sql).run(on: connection)
                }
                early.built[entry.tableName, default: []].append(entry.name)
            } catch let error as CofferError where RepairWriter.outputFailed(error) {
                throw error
            } catch {
                early.failed[entry.name] = (entry.tableName, "not created: \(Self.reason(error))")
            }
        }
    }

    /// Drops the indexes built early on `table` before more rows go into it; `finish` builds them again.
    func dropEarlyIndexes(of table: String) throws {
        for (name, failure) in early.failed where failure.table == table { early.failed[name] = nil }
        guard let names = early.built.removeValue(forKey: table) else { return }
        try onWriter { connection in
            for name in names { try connection.execute(sql: "DROP INDEX \(SQLIdentifier.quote(name))") }
        }
    }

    /// Drops indexes built early that `schema` (the salvage's final one) does not name.
    func dropEarlyIndexes(missingFrom schema: Schema) throws {
        let named = Set(schema.indexes.map(\.name))
        for (table, names) in early.built {
            let gone = names.filter { !named.contains($0) }
            guard !gone.isEmpty else { continue }
            try database.writeWithoutTransaction { connection in
                for name in gone { try connection.execute(sql: "DROP INDEX \(SQLIdentifier.quote(name))") }
            }
            early.built[table] = names.filter { named.contains($0) }
        }
    }

    /// Settles `entry` at `finish` if it was built or refused early: true when there is nothing left to
    /// do for it (built: counted as created; refused: reported with its reason).
    func settleEarlyIndex(_ entry: SchemaEntry) -> Bool {
        if early.built[entry.tableName]?.contains(entry.name) == true {
            outcome.objectsCreated.append(entry.name)
            return true
        }
        if let failure = early.failed.removeValue(forKey: entry.name) {
            fail(kind: entry.kind.rawValue, name: entry.name, reason: failure.reason)
            return true
        }
        return false
    }
}
