import CSQLCipher
import Foundation

/// The tables a fetch read: a commit that changed none of them cannot change the fetched value.
///
/// Recorded by tracing the statements the fetch ran on its reader (`sqlite3_trace_v2`), then asking
/// SQLite, per distinct SQL text, which b-trees the statement opens (`EXPLAIN`'s `OpenRead` root pages,
/// mapped to tables through `sqlite_master`) and which columns it reads (the authorizer's `SQLITE_READ`,
/// which also names virtual tables, whose shadow tables are the ones that change). Both are needed:
/// SQLite 3.15's authorizer names no table for `SELECT count(*) FROM t`, and `EXPLAIN` does not see
/// inside virtual tables.
struct ReadRegion: Sendable, Equatable {
    /// Lower-cased table names; nil when the fetch may have read anything (another schema, an
    /// unexpected plan).
    var tables: Set<String>?

    static let everything = ReadRegion(tables: nil)

    func isTouched(by changes: DatabaseChangeSet) -> Bool {
        guard let tables else { return true }
        return changes.touches(lowercased: tables)
    }

    mutating func formUnion(_ other: ReadRegion) {
        guard let mine = tables, let theirs = other.tables else {
            tables = nil
            return
        }
        tables = mine.union(theirs)
    }
}

/// Records the statements one connection runs and works out their ``ReadRegion``.
final class ReadRegionRecorder {
    /// Regions already worked out, by SQL text (cleared when the schema may have changed).
    private var cache: [String: ReadRegion] = [:]
    private var statements: Set<String> = []

    /// Forgets the regions worked out so far (the schema may have changed).
    func forgetCachedRegions() { cache.removeAll() }

    /// Runs `body` on `connection` recording the statements it runs, then returns its value and the
    /// region they read (worked out on the same connection, inside the caller's read transaction).
    func record<T>(on connection: Connection, _ body: () throws -> T) throws -> (T, ReadRegion) {
        statements.removeAll(keepingCapacity: true)
        let listener = connection.addTraceListener(mask: SQLITE_TRACE_STMT) { [self] event in
            if let sql = sqlite3_sql(event.statement) { statements.insert(String(cString: sql)) }
        }
        let value: T
        do {
            defer { connection.removeTraceListener(listener) }
            value = try body()
        }
        var region = ReadRegion(tables: [])
        for sql in statements {
            if let known = cache[sql] {
                region.formUnion(known)
                continue
            }
            let found = (try? Self.region(of: sql, on: connection)) ?? .everything
            cache[sql] = found
            region.formUnion(found)
        }
        return (value, region)
    }

    private static func region(of sql: String, on connection: Connection) throws -> ReadRegion {
        var tables: Set<String> = []
        var everything = false
        var virtualCandidates: Set<String> = []
        let explain = try connection.withAuthorizer({ request in
            if request.action == .read, let table = request.first {
                if request.database == "main" { virtualCandidates.insert(table.lowercased()) } else { everything = true }
            }
            return true
        }) { try connection.makeStatement(sql: "EXPLAIN " + sql) }
        var roots: Set<Int64> = []
        while try explain.step() {
            let row = explain.row()
            guard case .text(let opcode) = row[1], opcode == "OpenRead" || opcode == "OpenWrite" else { continue }
            // P3 is the schema (0 = main); P5 flag 0x02 means P2 is a register, not a root page.
            guard case .integer(let schema) = row[4], schema == 0, case .integer(let p5) = row[7], p5 & 0x02 == 0,
                case .integer(let root) = row[2]
            else {
                everything = true
                continue
            }
            roots.insert(root)
        }
        guard !everything else { return .everything }
        let schema = try connection.fetchAll(sql: "SELECT type, name, tbl_name, rootpage FROM main.sqlite_master")
        for row in schema {
            let name: String = (try? row.decode(String.self, at: 1)) ?? ""
            let table: String = (try? row.decode(String.self, at: 2)) ?? ""
            let root: Int64 = (try? row.decode(Int64.self, at: 3)) ?? 0
            if roots.contains(root) { tables.insert(table.lowercased()) }
            if roots.contains(1) { tables.insert("sqlite_master") }
            // A virtual table's rows live in its shadow tables, named after it.
            for candidate in virtualCandidates where root == 0 && name.lowercased() == candidate {
                tables.insert(candidate)
                for shadow in schema {
                    let shadowName = ((try? shadow.decode(String.self, at: 1)) ?? "").lowercased()
                    if shadowName.hasPrefix(candidate + "_") { tables.insert(shadowName) }
                }
            }
        }
        for candidate in virtualCandidates { tables.insert(candidate) }
        return ReadRegion(tables: tables)
    }
}
