// The schema of a full-text index: an FTS4 (or FTS5) table over the content table, and four triggers.
//
// The full-text table is declared with `content="<table>"`, so the text is stored once, in the app's own
// table, and the index holds only terms. FTS4 reads a row's old text from the content table when it deletes
// that row's terms, so the triggers that delete run BEFORE the content changes, and those that insert AFTER
// (SQLite's documented recipe for external content); FTS5 is given the old text in its 'delete' command,
// and keeps the same four triggers. They fire for every write whichever API made it —
// records, `updateAll`/`deleteAll`, raw SQL — in the writer's own transaction. An UPDATE that leaves the
// indexed columns and the rowid alone re-indexes nothing (the WHEN clause). The AFTER INSERT trigger
// stands aside while the index's name is in `coffer_fulltext_pause`, a row only `insertAll` writes and
// deletes inside its own savepoint (it indexes those rows itself, in one segment: FullTextIndex+Batch).

import CofferEngine
import CofferRecords

extension FullTextIndex {
    /// `CREATE VIRTUAL TABLE … USING fts4(content="table", columns…, tokenize=…)`, or `fts5(columns…,
    /// content="table", tokenize='…')`.
    var createSQL: String {
        get throws {
            // FTS reads an external content table's columns as they are stored: compressed bytes.
            let compressed = Root.columnDefinitions.filter { $0.compression != nil && columnNames.contains($0.name) }
            if let column = compressed.first {
                throw CofferError(
                    code: .apiMisuse,
                    message: "\(Root.tableName).\(column.name) is compressed: a full-text index cannot index a compressed column")
            }
            let content = "content=" + (try SQLIdentifier.validated(Root.tableName))
            let columns = try columnNames.map { try SQLIdentifier.validated($0) }
            let head = "CREATE VIRTUAL TABLE " + (try SQLIdentifier.validated(name))
            switch engine {
            case .fts4:
                let arguments = [content] + columns + ["tokenize=" + tokenizer.declaration]
                return head + " USING fts4(" + arguments.joined(separator: ", ") + ")"
            case .fts5:
                try LinkedSQLite.require(.fts5, for: "the FTS5 full-text index \(name)")
                // FTS5 reads `tokenize` as one string of words (quoted ones dequoted): `'coffer_pinyin "fold=0"'`.
                let tokenize = "tokenize='" + tokenizer.fts5Declaration.replacingOccurrences(of: "'", with: "''") + "'"
                let arguments = columns + [content, tokenize]
                return head + " USING fts5(" + arguments.joined(separator: ", ") + ")"
            }
        }
    }

    /// The table whose rows (index names, never committed) make the AFTER INSERT triggers stand aside.
    static var pauseTable: String { "coffer_fulltext_pause" }

    /// The triggers that keep the index in step with the content table, by name.
    var triggers: [(name: String, sql: String)] {
        get throws {
            let fts = try SQLIdentifier.validated(name)
            let table = try SQLIdentifier.validated(Root.tableName)
            let columns = try columnNames.map { try SQLIdentifier.validated($0) }
            let list = columns.joined(separator: ", ")
            let values = columns.map { "new." + $0 }.joined(separator: ", ")
            let changed = (["rowid"] + columns).map { "old.\($0) IS NOT new.\($0)" }.joined(separator: " OR ")
            let remove: String
            switch engine {
            case .fts4: remove = "DELETE FROM \(fts) WHERE docid = old.rowid;"
            case .fts5:
                // FTS5 removes an external-content row's terms from the values given, not from the table.
                let oldValues = columns.map { "old." + $0 }.joined(separator: ", ")
                remove = "INSERT INTO \(fts)(\(fts), rowid, \(list)) VALUES ('delete', old.rowid, \(oldValues));"
            }
            let add = "INSERT INTO \(fts)(\(engine.rowidColumn), \(list)) VALUES (new.rowid, \(values));"
            let literal = "'" + name.replacingOccurrences(of: "'", with: "''") + "'"
            let unpaused = "NOT EXISTS (SELECT 1 FROM \(Self.pauseTable) WHERE index_name = \(literal))"
            let triggers = [
                ("before_update", "BEFORE UPDATE ON \(table) WHEN \(changed) BEGIN \(remove) END"),
                ("before_delete", "BEFORE DELETE ON \(table) BEGIN \(remove) END"),
                ("after_update", "AFTER UPDATE ON \(table) WHEN \(changed) BEGIN \(add) END"),
                ("after_insert", "AFTER INSERT ON \(table) WHEN \(unpaused) BEGIN \(add) END"),
            ]
            return try triggers.map { suffix, body in
                let triggerName = name + "_" + suffix
                return (triggerName, "CREATE TRIGGER " + (try SQLIdentifier.validated(triggerName)) + " " + body)
            }
        }
    }
}

extension Connection {
    /// Creates or updates the full-text index of `table` if it declares one (called by
    /// ``upgradeSchema(for:)`` after the table itself): a missing or differently declared FTS table is
    /// (re)created and rebuilt from the content; triggers are (re)created when their SQL differs. Returns the
    /// index's name when it was (re)created.
    func upgradeFullTextIndex<Table: TableRecord>(of table: Table.Type) throws -> String? {
        guard let searchable = table as? any FullTextSearchable.Type else { return nil }
        return try upgradeIndex(of: searchable)
    }

    private func upgradeIndex<Root: FullTextSearchable>(of table: Root.Type) throws -> String? {
        let index = Root.fullTextIndex
        guard !Root.withoutRowID else {
            throw CofferError(
                code: .apiMisuse,
                message: "a full-text index needs a rowid table: \(Root.tableName) is declared WITHOUT ROWID")
        }
        let existing = try fetchAll(
            sql: "SELECT type, name, sql FROM sqlite_master WHERE name = ? OR (type = 'trigger' AND tbl_name = ?)",
            arguments: [index.name, Root.tableName])
        var current: [String: String] = [:]
        for row in existing {
            if let name: String = row["name"], let sql: String = row["sql"] { current[name.lowercased()] = sql }
        }
        let createSQL = try index.createSQL
        let triggers = try index.triggers
        let recreate = current[index.name.lowercased()] != createSQL
        try execute(
            sql: "CREATE TABLE IF NOT EXISTS \(FullTextIndex<Root>.pauseTable)(index_name TEXT PRIMARY KEY) WITHOUT ROWID")
        if recreate {
            for trigger in triggers where current[trigger.name.lowercased()] != nil {
                try execute(sql: "DROP TRIGGER " + (try SQLIdentifier.validated(trigger.name)))
                current[trigger.name.lowercased()] = nil
            }
            if current[index.name.lowercased()] != nil {
                try execute(sql: "DROP TABLE " + (try SQLIdentifier.validated(index.name)))
            }
            try execute(sql: createSQL)
        }
        for trigger in triggers where current[trigger.name.lowercased()] != trigger.sql {
            if current[trigger.name.lowercased()] != nil {
                try execute(sql: "DROP TRIGGER " + (try SQLIdentifier.validated(trigger.name)))
            }
            try execute(sql: trigger.sql)
        }
        if recreate { try index.rebuild(self) }
        return recreate ? index.name : nil
    }
}
