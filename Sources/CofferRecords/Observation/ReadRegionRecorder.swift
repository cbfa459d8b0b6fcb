import CSQLCipher
import CofferEngine
import Foundation

/// Records the statements a fetch runs on its reader and works out their ``ReadRegion``.
///
/// The statements are traced (a listener on the connection's one `sqlite3_trace_v2` callback); for each
/// distinct SQL text SQLite itself is asked what it reads, inside the fetch's read transaction:
/// - which b-trees `EXPLAIN` opens (`OpenRead` root pages, mapped to tables through `sqlite_master`),
///   which names tables SQLite 3.15's authorizer leaves out (`SELECT count(*) FROM t`);
/// - which columns the authorizer sees read (`SQLITE_READ`, one call per column, for views and
///   subqueries too); a table opened with none read is read for its rows' existence only. Virtual tables
///   are named there too, and their shadow tables (named after them) are the ones that change;
/// - which rows: a table cursor positioned only by `SeekRowid`/`NotExists` on a constant reads those
///   rowids alone. When the rowid is a bound parameter, the statement's SQL with its values in place
///   (`sqlite3_expanded_sql`) is explained again, so `WHERE id = ?` is as precise as `WHERE id = 5`.
final class ReadRegionRecorder {
    private struct Analysis {
        var region: ReadRegion
        /// Some table is read by rowid from a bound parameter: the values make the region precise.
        var seeksByParameter: Bool
    }

    /// Analyses already worked out, by SQL text (cleared when the schema may have changed).
    private var cache: [String: Analysis] = [:]
    private var statements: [String] = []
    /// Statements run with their parameters' values in place, when those decide which rows are read.
    private var expanded: [String: Set<String>] = [:]

    /// Forgets the regions worked out so far (the schema may have changed).
    func forgetCachedRegions() { cache.removeAll() }

    /// Runs `body` on `connection` recording the statements it runs, then returns its value and the
    /// region they read (worked out on the same connection, inside the caller's read transaction).
    func record<T>(on connection: Connection, _ body: () throws -> T) throws -> (T, ReadRegion) {
        statements.removeAll(keepingCapacity: true)
        expanded.removeAll(keepingCapacity: true)
        let listener = connection.addTraceListener(mask: SQLITE_TRACE_STMT) { [self] event in willRun(event.statement) }
        let value: T
        do {
            defer { connection.removeTraceListener(listener) }
            value = try body()
        }
        var region = ReadRegion(tables: [:])
        var schema: [SchemaRow]?
        func analysis(of sql: String) -> Analysis {
            do {
                let rows = try schema ?? Self.schema(on: connection)
                schema = rows
                return try Self.analyze(sql, schema: rows, on: connection)
            } catch {
                return Analysis(region: .everything, seeksByParameter: false)
            }
        }
        for sql in Set(statements) {
            let general = cache[sql] ?? analysis(of: sql)
            cache[sql] = general
            guard general.seeksByParameter, let variants = expanded[sql], variants.count <= Self.maximumExpansions else {
                region.formUnion(general.region)
                continue
            }
            for variant in variants {
                let exact = analysis(of: variant)
                // Values that did not become constants (text, a subquery) leave the tables fully read.
                region.formUnion(exact.seeksByParameter ? general.region : exact.region)
            }
        }
        return (value, region)
    }

    /// Beyond this many executions of one statement with different values, its rows count as all rows.
    private static let maximumExpansions = 32

    private func willRun(_ statement: OpaquePointer) {
        guard let text = sqlite3_sql(statement) else { return }
        let sql = String(cString: text)
        statements.append(sql)
        let wantsValues = cache[sql]?.seeksByParameter ?? (sqlite3_bind_parameter_count(statement) > 0)
        guard wantsValues, expanded[sql, default: []].count <= Self.maximumExpansions,
            let values = sqlite3_expanded_sql(statement)
        else { return }
        expanded[sql, default: []].insert(String(cString: values))
        sqlite3_free(values)
    }

    // MARK: Asking SQLite

    private struct SchemaRow {
        var type: String
        var name: String
        var table: String
        var root: Int64
        var isUnique: Bool
    }

    private static func schema(on connection: Connection) throws -> [SchemaRow] {
        try connection.fetchAll(sql: "SELECT type, name, tbl_name, rootpage, sql FROM main.sqlite_master").map { row in
            let name = ((try? row.decode(String.self, at: 1)) ?? "").lowercased()
            let sql = ((try? row.decode(String.self, at: 4)) ?? "").uppercased()
            // Indexes SQLite makes for UNIQUE and PRIMARY KEY constraints have no SQL of their own.
            let unique = name.hasPrefix("sqlite_autoindex_") || sql.hasPrefix("CREATE UNIQUE")
            return SchemaRow(
                type: (try? row.decode(String.self, at: 0)) ?? "", name: name,
                table: ((try? row.decode(String.self, at: 2)) ?? "").lowercased(),
                root: (try? row.decode(Int64.self, at: 3)) ?? 0,
                isUnique: unique)
        }
    }

    /// The columns of `table`'s unique indexes (lower-cased); nil when it has none.
    private static func uniqueColumns(of table: String, schema: [SchemaRow], on connection: Connection) throws -> Set<String>? {
        var columns: Set<String>?
        for index in schema where index.type == "index" && index.table == table && index.isUnique {
            let quoted = "'" + index.name.replacingOccurrences(of: "'", with: "''") + "'"
            for row in try connection.fetchAll(sql: "PRAGMA main.index_info(\(quoted))") {
                // An expression in the index has no name: any update may then conflict.
                columns = (columns ?? []).union([((try? row.decode(String.self, at: 2)) ?? "*").lowercased()])
            }
            if columns == nil { columns = ["*"] }
        }
        return columns
    }

    private static func analyze(_ sql: String, schema: [SchemaRow], on connection: Connection) throws -> Analysis {
        var columnsRead: [String: Set<String>] = [:]
        var elsewhere = false
        let explain = try connection.withAuthorizer({ request in
            if request.action == .read, let table = request.first {
                if request.database == "main" {
                    columnsRead[table.lowercased(), default: []].insert((request.second ?? "").lowercased())
                } else {
                    elsewhere = true
                }
            }
            return true
        }) { try connection.makeStatement(sql: "EXPLAIN " + sql) }
        var program = VirtualMachineProgram()
        while try explain.step() { program.append(explain.row()) }
        guard !elsewhere, let cursors = program.cursorRoots() else {
            return Analysis(region: .everything, seeksByParameter: false)
        }
        var tables: [String: ReadRegion.Table] = [:]
        var seeksByParameter = false
        for (cursor, roots) in cursors {
            let access = program.rowAccess(of: cursor)
            if case .byParameter = access { seeksByParameter = true }
            for root in roots {
                guard let entry = schema.first(where: { $0.root == root }) else {
                    // Root page 1 is sqlite_master; any other unknown root: anything.
                    guard root == 1 else { return Analysis(region: .everything, seeksByParameter: false) }
                    tables["sqlite_master"] = .everything
                    continue
                }
                var read = ReadRegion.Table(columns: columnsRead[entry.table] ?? [], rowIDs: nil)
                if entry.type == "table", case .rowIDs(let ids) = access { read.rowIDs = ids }
                tables[entry.table, default: read].formUnion(read)
            }
        }
        for table in tables.keys where tables[table] != .everything {
            guard let unique = try uniqueColumns(of: table, schema: schema, on: connection) else { continue }
            // A unique expression ("*") may conflict on any update: the table counts as fully read.
            if unique.contains("*") { tables[table] = .everything } else { tables[table]?.replacingColumns = unique }
        }
        // Columns read of tables no cursor opened directly (through a virtual table) count too.
        for (table, columns) in columnsRead where tables[table] == nil {
            tables[table] = ReadRegion.Table(columns: columns, rowIDs: nil)
        }
        // A virtual table's rows live in its shadow tables, named after it.
        for virtual in schema where virtual.root == 0 && virtual.type == "table" && columnsRead[virtual.name] != nil {
            tables[virtual.name] = .everything
            for shadow in schema where shadow.name.hasPrefix(virtual.name + "_") { tables[shadow.name] = .everything }
        }
        return Analysis(region: ReadRegion(tables: tables), seeksByParameter: seeksByParameter)
    }
}
