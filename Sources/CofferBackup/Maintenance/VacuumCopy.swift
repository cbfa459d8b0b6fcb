// VacuumCopy — fills a new database file from the live one, table by table, in bounded memory.
//
// SQLite's VACUUM copies the whole database into a temporary database and then back over the file; this
// SQLCipher is built with TEMP_STORE=2, so that temporary database lives in memory: VACUUM's peak memory
// is the database's size. Here the copy goes instead into a new encrypted file beside the database
// (`<path>-vacuum`), attached with the database's own key and salt, so it opens with the key connections
// already hold. Every step is a statement SQLite streams through the page caches:
// 1. the schema's tables (CREATE TABLE, `sqlite_stat*` through `writable_schema`, as VACUUM does);
// 2. each table's rows in rowid order, `batchRows` per transaction (WITHOUT ROWID tables in one statement):
//    the new file is written sequentially in key order, and a commit per batch keeps the dirty pages few;
// 3. the indexes, built after the rows (a sorted build: compact indexes), their sorts spilling to Coffer's
//    encrypted temporary files (the copy's connection uses TemporaryStorage.encryptedFiles);
// 4. `sqlite_sequence`, then views, triggers and virtual tables as sqlite_master rows (as VACUUM does:
//    their shadow tables were copied as tables), `user_version` and `application_id`.
// The new file is written with journal_mode = OFF and synchronous = OFF (it is thrown away unless complete)
// and fsynced once at the end, before Database+Vacuum renames it over the database.

import CSQLCipher
import CofferEngine
import CofferRecords
import Foundation

/// Where a vacuum is.
public struct VacuumProgress: Sendable {
    /// The table (or "indexes", "schema") being copied.
    public var step: String
    /// Pages written to the new file so far.
    public var pagesWritten: Int
    /// Pages the new file is expected to hold: the database's pages less its free pages.
    public var pagesExpected: Int
}

struct VacuumCopy {
    static let schemaName = "coffer_vacuum"
    let connection: Connection
    let batchRows: Int
    let progress: ((VacuumProgress) -> Void)?
    let pagesExpected: Int

    /// Attaches `destination` with `keySpec` (nil: plaintext) and the database's page settings.
    static func attach(
        _ connection: Connection, destination: String, keySpec: SecureBytes?, pageSize: Int, encrypted: Bool,
        usesHMAC: Bool, format: LinkedSQLCipher.PageFormat = .sqlcipher3
    ) throws {
        try connection.attach(destination, as: schemaName, keySpec: keySpec)
        var pragmas = ["PRAGMA \(schemaName).journal_mode = OFF", "PRAGMA \(schemaName).synchronous = OFF"]
        if encrypted {
            // The main file's page format: an attached file keyed with its own key gets the library's
            // defaults, which on SQLCipher 4 are not Coffer's (see LinkedSQLCipher).
            pragmas.insert(
                contentsOf: LinkedSQLCipher.pageFormatPragmas(
                    schema: schemaName, format: format, pageSize: pageSize, usesHMAC: usesHMAC), at: 0)
        } else {
            pragmas.insert("PRAGMA \(schemaName).page_size = \(pageSize)", at: 0)
        }
        let autoVacuum = try connection.fetchValue(Int.self, sql: "PRAGMA main.auto_vacuum") ?? 0
        pragmas.append("PRAGMA \(schemaName).auto_vacuum = \(autoVacuum)")
        try connection.executeScript(pragmas.joined(separator: "; "))
    }

    /// Copies everything (steps 1–4 above).
    func run() throws {
        let target = Self.schemaName
        let entries = try connection.fetchAll(
            sql: "SELECT type, name, sql, rootpage FROM main.sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
        let tables = entries.filter { ($0["type"] as String?) == "table" && ($0["rootpage"] as Int? ?? 0) > 0 }
            .compactMap { row -> (name: String, sql: String)? in
                guard let name: String = row["name"], let sql: String = row["sql"], name != "sqlite_sequence" else {
                    return nil
                }
                return (name, sql)
            }
        try connection.executeScript("PRAGMA writable_schema = ON")
        defer { try? connection.executeScript("PRAGMA writable_schema = OFF") }
        try connection.execute(sql: "BEGIN")
        for table in tables {
            try connection.execute(sql: "CREATE TABLE \(target)." + Self.afterPrefix(table.sql, "CREATE TABLE "))
        }
        try connection.execute(sql: "COMMIT")
        for table in tables { try copyRows(of: table.name) }
        report("indexes")
        for entry in entries where (entry["type"] as String?) == "index" {
            guard let sql: String = entry["sql"] else { continue }
            let unique = sql.hasPrefix("CREATE UNIQUE INDEX ")
            let rest = Self.afterPrefix(sql, unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ")
            try connection.execute(sql: (unique ? "CREATE UNIQUE INDEX " : "CREATE INDEX ") + "\(target)." + rest)
            report("indexes")
        }
        report("schema")
        try connection.execute(sql: "BEGIN")
        if try connection.fetchValue(Int.self, sql: "SELECT count(*) FROM main.sqlite_master WHERE name = 'sqlite_sequence'")
            == 1
        {
            try connection.executeScript(
                "DELETE FROM \(target).sqlite_sequence; INSERT INTO \(target).sqlite_sequence SELECT * FROM main.sqlite_sequence")
        }
        try connection.execute(
            sql: """
                INSERT INTO \(target).sqlite_master SELECT * FROM main.sqlite_master
                WHERE type IN ('view', 'trigger') OR (type = 'table' AND rootpage = 0)
                """)
        let userVersion = try connection.fetchValue(Int.self, sql: "PRAGMA main.user_version") ?? 0
        let applicationID = try connection.fetchValue(Int.self, sql: "PRAGMA main.application_id") ?? 0
        try connection.executeScript(
            "PRAGMA \(target).user_version = \(userVersion); PRAGMA \(target).application_id = \(applicationID)")
        try connection.execute(sql: "COMMIT")
    }

    /// Copies one table's rows: in rowid order, `batchRows` per transaction, rowids kept.
    private func copyRows(of table: String) throws {
        let quoted = SQLIdentifier.quote(table)
        let target = "\(Self.schemaName).\(quoted)"
        let columns = try connection.fetchAll(sql: "PRAGMA main.table_info(\(quoted))").compactMap { $0["name"] as String? }
        let names = Set(columns.map { $0.lowercased() })
        let list = columns.map(SQLIdentifier.quote).joined(separator: ", ")
        // The rowid under a name no column takes; none free, or a WITHOUT ROWID table: one statement.
        guard let rowid = ["rowid", "_rowid_", "oid"].first(where: { !names.contains($0) }),
            (try? connection.makeStatement(sql: "SELECT \(rowid) FROM main.\(quoted) LIMIT 0")) != nil
        else {
            try connection.execute(sql: "INSERT INTO \(target) SELECT * FROM main.\(quoted)")
            report(table)
            return
        }
        let insert = try connection.makeStatement(
            sql: """
                INSERT INTO \(target)(\(rowid), \(list)) SELECT \(rowid), \(list) FROM main.\(quoted)
                WHERE \(rowid) > ?1 ORDER BY \(rowid) LIMIT \(batchRows)
                """)
        let last = try connection.makeStatement(sql: "SELECT max(\(rowid)) FROM \(target)")
        var after = Int64.min
        // The smallest possible rowid cannot be "after" anything: copied on its own first.
        try connection.execute(
            sql: "INSERT INTO \(target)(\(rowid), \(list)) SELECT \(rowid), \(list) FROM main.\(quoted) WHERE \(rowid) = ?",
            arguments: StatementArguments([DatabaseValue.integer(Int64.min)]))
        while true {
            insert.reset()
            try insert.bind(.integer(after), toParameter: 1)
            _ = try insert.step()
            let copied = connection.changesCount
            last.reset()
            guard try last.step(), case .integer(let next) = last.value(at: 0), copied > 0 else { break }
            after = next
            report(table)
            if copied < batchRows { break }
        }
        last.reset()
    }

    private func report(_ step: String) {
        guard let progress else { return }
        let pages = (try? connection.fetchValue(Int.self, sql: "PRAGMA \(Self.schemaName).page_count")) ?? 0
        progress(VacuumProgress(step: step, pagesWritten: pages, pagesExpected: pagesExpected))
    }

    /// `sql` without its leading `prefix` (sqlite_master keeps `CREATE TABLE ` and `CREATE INDEX ` as written
    /// by SQLite's normalisation: the keywords, one space, then the name).
    static func afterPrefix(_ sql: String, _ prefix: String) -> String {
        sql.uppercased().hasPrefix(prefix) ? String(sql.dropFirst(prefix.count)) : sql
    }
}
