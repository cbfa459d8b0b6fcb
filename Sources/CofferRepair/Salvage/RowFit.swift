// RowFit — whether a decoded record can be a row of a given table, and how it becomes one.
//
// SQLite applies column affinity on insert, so some (value, affinity) pairs can never be on disk:
// - a TEXT-affinity column never stores an INTEGER or REAL (they are converted to text);
// - an INTEGER, NUMERIC or REAL column never stores text that looks like a number (it is converted), and
//   INTEGER/NUMERIC never store a REAL that is a whole number within Int64 range (it becomes an integer);
// - NULL and BLOB fit everywhere; BLOB affinity (no declared type) accepts anything.
// Structure: a rowid table's record has 1…column-count fields (ALTER TABLE ADD COLUMN leaves older records
// shorter; the missing trailing columns take their defaults); its INTEGER PRIMARY KEY field is stored as
// NULL. A WITHOUT ROWID record has exactly column-count fields, PRIMARY KEY fields first, never NULL.
// A record failing these was not written into this table, so it is not salvaged into it.
// Conversion: a whole number stored as an integer in a REAL column is returned as REAL (as SQLite reads it);
// the INTEGER PRIMARY KEY column gets the rowid. A recovered rowid table (no schema) gets the rowid in its `id`
// column, before the record's fields, and in its first field too when that is its alias.

/// Record-versus-schema checks.
enum RowFit {
    /// Whether `value` could be stored in a column of `affinity`. `checkText` is false for non-UTF-8
    /// databases, where numeric-looking text is not detected.
    static func fits(_ value: SalvagedValue, _ affinity: Affinity, checkText: Bool = true) -> Bool {
        switch (value, affinity) {
        case (.null, _), (.blob, _), (_, .blob), (.text, .text): return true
        case (.integer, .text), (.real, .text): return false
        case (.integer, _): return true
        case (.real(let number), .integer), (.real(let number), .numeric):
            return !(number.rounded() == number && abs(number) < 9.2e18)
        case (.real, .real): return true
        case (.text(let bytes), _): return !checkText || !looksNumeric(bytes)
        }
    }

    /// Whether text would be converted to a number by INTEGER/REAL/NUMERIC affinity: optional blanks,
    /// optional sign, digits with at most one point (at least one digit), optional exponent, blanks.
    static func looksNumeric(_ bytes: [UInt8]) -> Bool {
        var index = 0
        func skipSpaces() { while index < bytes.count, [0x20, 0x09, 0x0a, 0x0d, 0x0c].contains(bytes[index]) { index += 1 } }
        func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 { index += 1 }
            return index - start
        }
        skipSpaces()
        if index < bytes.count, bytes[index] == 0x2b || bytes[index] == 0x2d { index += 1 }
        var count = digits()
        if index < bytes.count, bytes[index] == 0x2e {
            index += 1
            count += digits()
        }
        guard count > 0 else { return false }
        if index < bytes.count, bytes[index] == 0x65 || bytes[index] == 0x45 {
            index += 1
            if index < bytes.count, bytes[index] == 0x2b || bytes[index] == 0x2d { index += 1 }
            guard digits() > 0 else { return false }
        }
        skipSpaces()
        return index == bytes.count
    }

    /// The row a record of `table` represents, or `nil` if the record cannot be a row of it.
    static func row(
        fields: [SalvagedValue], rowid: Int64?, table: TableDescription, checkText: Bool = true
    ) -> SalvagedRow? {
        let columns = table.columns
        if table.withoutRowid {
            guard fields.count == columns.count else { return nil }
            let order = table.recordFieldColumns
            guard order.count == fields.count else { return nil }
            var values = [SalvagedValue](repeating: .null, count: columns.count)
            for (index, value) in fields.enumerated() {
                let column = order[index]
                if index < table.primaryKeyColumns.count, value == .null { return nil }
                guard fits(value, columns[column].affinity, checkText: checkText) else { return nil }
                values[column] = convert(value, columns[column].affinity)
            }
            return SalvagedRow(rowid: nil, values: values)
        }
        guard let rowid, !fields.isEmpty, fields.count <= table.recordWidth else { return nil }
        if let layout = table.recoveredRowid {
            // Inferred columns take any value; `id` is the rowid, and an alias first field was stored as NULL.
            var values = [SalvagedValue.integer(rowid)] + fields
            if layout == .firstFieldIsAlias {
                guard fields[0] == .null else { return nil }
                values[1] = .integer(rowid)
            }
            return SalvagedRow(rowid: rowid, values: values)
        }
        var values: [SalvagedValue] = []
        values.reserveCapacity(fields.count)
        for (index, value) in fields.enumerated() {
            if index == table.rowidAliasColumn {
                guard value == .null else { return nil }
                values.append(.integer(rowid))
                continue
            }
            guard fits(value, columns[index].affinity, checkText: checkText) else { return nil }
            values.append(convert(value, columns[index].affinity))
        }
        return SalvagedRow(rowid: rowid, values: values)
    }

    static func convert(_ value: SalvagedValue, _ affinity: Affinity) -> SalvagedValue {
        if affinity == .real, case .integer(let number) = value { return .real(Double(number)) }
        return value
    }
}
