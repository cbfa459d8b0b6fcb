import CofferEngine

extension TableRecord {
    /// `CREATE TABLE "name" (…)` for the declared columns and constraints, under `name` (the table's own
    /// name, or a temporary one when a migration rebuilds it).
    package static func createTableSQL(named name: String? = nil) throws -> String {
        var parts = try columnDefinitions.map { try $0.sql(withoutRowID: withoutRowID) }
        parts += try constraints.map { try $0.sql() }
        var sql = "CREATE TABLE " + (try SQLIdentifier.validated(name ?? tableName)) + " (" + parts.joined(separator: ", ") + ")"
        if withoutRowID { sql += " WITHOUT ROWID" }
        return sql
    }
}
