// HashingSink — the migration's sink: rows go to the repair writer and into each table's TableHash.

/// Forwards rows to the repair writer, hashing each table's rows on the way.
struct HashingSink: SalvageSink {
    let writer: RepairWriter
    private let defaults = ColumnDefaults()
    private(set) var tables: [TableDescription] = []
    private(set) var hashes: [String: TableHash] = [:]
    /// INPUT's AUTOINCREMENT counters (its sqlite_sequence rows).
    private(set) var sequences: [String: Int64] = [:]
    /// INPUT's schema, once the salvage has finished.
    private(set) var schema: Schema?

    init(writer: RepairWriter) { self.writer = writer }

    mutating func begin(table: TableDescription) throws {
        tables.append(table)
        try writer.begin(table: table)
    }

    mutating func insert(_ row: SalvagedRow, into table: TableDescription) throws {
        let rowid: Int64? = table.withoutRowid ? nil : row.rowid
        // A record shorter than its table (a column added later) reads back with the missing columns
        // filled with their DEFAULT, on the output as on the input.
        hashes[table.name, default: TableHash()].add(rowid: rowid, values: defaults.complete(row.values, of: table))
        if table.name.lowercased() == "sqlite_sequence", row.values.count >= 2, case .text(let name) = row.values[0],
            case .integer(let value) = row.values[1]
        {
            sequences[String(decoding: name, as: UTF8.self)] = value
        }
        try writer.insert(row, into: table)
    }

    mutating func finish(schema: Schema) throws {
        self.schema = schema
        try writer.finish(schema: schema)
    }
}
