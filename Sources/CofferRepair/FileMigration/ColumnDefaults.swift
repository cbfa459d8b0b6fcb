// ColumnDefaults — what SQLite reads for the columns a record does not store.
//
// A row written before `ALTER TABLE … ADD COLUMN c … DEFAULT d` keeps its shorter record; SQLite fills
// the missing trailing columns with the column's DEFAULT when it reads the row, and the migrated copy
// (whose INSERT names only the stored columns) gets the same default. The migration check hashes the
// input side from the records, so it must fill them the same way. The defaults are evaluated by SQLite
// itself, in a private in-memory database holding only the table's own CREATE statement (run as one
// authorized CREATE TABLE, like the repair writer does), and only for tables that have a short record.

import Coffer

/// The value SQLite reads for each column of a table that a record does not store.
final class ColumnDefaults {
    private var scratch: Database?
    private var evaluated: [String: [SalvagedValue]] = [:]

    /// `values` padded with the defaults of `table`'s trailing columns, cut to the table's width.
    func complete(_ values: [SalvagedValue], of table: TableDescription) -> [SalvagedValue] {
        let width = table.columns.count
        guard values.count < width else { return Array(values.prefix(width)) }
        let defaults = self.defaults(of: table)
        return values + (values.count..<width).map { $0 < defaults.count ? defaults[$0] : .null }
    }

    /// One value per column: its DEFAULT evaluated by SQLite, NULL when it has none or it cannot be read.
    private func defaults(of table: TableDescription) -> [SalvagedValue] {
        if let known = evaluated[table.name] { return known }
        let values = (try? evaluate(table)) ?? []
        evaluated[table.name] = values
        return values
    }

    private func evaluate(_ table: TableDescription) throws -> [SalvagedValue] {
        let database = try scratch ?? Database.inMemory()
        scratch = database
        return try database.writeWithoutTransaction { connection in
            let name = SQLIdentifier.quote(table.name)
            try connection.makeStatement(sql: "DROP TABLE IF EXISTS \(name)").step()
            try UntrustedCreate(kind: .table, name: table.name, table: table.name, sql: table.sql).run(on: connection)
            let expressions = try connection.fetchAll(sql: "PRAGMA table_info(\(name))").map { row -> String? in
                row["dflt_value"]
            }
            return expressions.map { expression in
                guard let expression else { return .null }
                return (try? Self.value(of: expression, connection: connection)) ?? .null
            }
        }
    }

    /// Evaluates one DEFAULT expression (SQLite's own text for it) as a single SELECT.
    private static func value(of expression: String, connection: Connection) throws -> SalvagedValue {
        let statement = try connection.makeStatement(sql: "SELECT (\(expression))")
        guard try statement.step() else { return .null }
        return salvagedValue(statement, at: 0)
    }
}
