// IndexShape — whether an index-format orphan page could be a real index's (rule 3 in OrphanScorer.swift).

/// The record shape of one real index: per field, the affinity its values were stored under (nil: any value,
/// for an expression term or an unknown column), and whether the last field is a rowid (always an integer).
struct IndexShape: Equatable {
    var fields: [Affinity?]
    var endsWithRowid: Bool
    /// The indexed table's name (nil when unknown).
    var table: String? = nil
    /// The index's name.
    var index: String = ""

    /// Whether every record could be an entry of this index: same width, every field fits its column's
    /// affinity (RowFit rules), and a rowid table's trailing rowid is an integer. Affinities are what tell a
    /// WITHOUT ROWID table's rows from a same-width index's entries: the index permutes the columns, so its
    /// fields rarely fit them in table order, and a row's fields rarely fit them in index order.
    ///
    /// Text fits a numeric column when it does not look numeric, so affinities alone often admit a row of
    /// another table; the trailing rowid is sharper evidence: an index entry names a row of its table, whose
    /// rowid was salvaged or lies where the table's walk left a hole (`rowidPlausible`).
    func admits(_ records: [[SalvagedValue]], checkText: Bool, rowidPlausible: (Int64) -> Bool) -> Bool {
        records.allSatisfy { fields in
            guard fields.count == self.fields.count else { return false }
            for (index, value) in fields.enumerated() {
                if endsWithRowid, index == fields.count - 1 {
                    guard case .integer(let rowid) = value, rowidPlausible(rowid) else { return false }
                } else if let affinity = self.fields[index], !RowFit.fits(value, affinity, checkText: checkText) {
                    return false
                }
            }
            return true
        }
    }
}

extension IndexShape {
    /// How many fields show their affinity positively in the page's records (`classes`, per field, the value
    /// classes seen): a number in a numeric column, text in a TEXT column, an integer as a rowid. Text in a
    /// numeric column is legal but weak evidence; a field with no affinity shows nothing.
    func positiveFields(classes: [Set<Character>]) -> Int {
        fields.indices.filter { index in
            guard index < classes.count else { return false }
            if endsWithRowid, index == fields.count - 1 { return classes[index] == ["i"] }
            return fields[index].map { IndexShapes.showsPositively(classes[index], $0) } ?? false
        }.count
    }
}

enum IndexShapes {
    /// Whether values of `classes` show `affinity` positively (the same test ``OrphanScorer`` scores).
    static func showsPositively(_ classes: Set<Character>, _ affinity: Affinity) -> Bool {
        switch affinity {
        case .integer, .real, .numeric: return classes.contains("i") || classes.contains("r")
        case .text: return classes.contains("t")
        case .blob: return false
        }
    }

    /// How many of `table`'s fields, in record order, show their affinity positively in `classes`.
    static func positiveFields(classes: [Set<Character>], table: TableDescription) -> Int {
        let order = table.recordFieldColumns
        return classes.indices.filter { position in
            position < order.count && showsPositively(classes[position], table.columns[order[position]].affinity)
        }.count
    }

    /// The record shapes of the schema's real indexes: the indexed terms plus the rowid (rowid tables) or
    /// plus the PRIMARY KEY columns not already indexed (WITHOUT ROWID tables). For an automatic index (no
    /// SQL) or an index of an unknown table, every width from 2 to the table's column count + 1 is assumed,
    /// with any value in any field.
    static func shapes(schema: Schema) -> [IndexShape] {
        var shapes: [IndexShape] = []
        let reader = CreateStatementReader()
        for entry in schema.indexes {
            let table = schema.tables.first { $0.name.lowercased() == entry.tableName.lowercased() }
            guard let table, let terms = table.isInferred ? nil : reader.indexedColumns(index: entry, table: table) else {
                let columnCount = table?.columns.count ?? 0
                for width in 2...max(2, columnCount + 1) {
                    shapes.append(
                        IndexShape(fields: Array(repeating: nil, count: width), endsWithRowid: false, index: entry.name))
                }
                continue
            }
            func affinity(_ name: String?) -> Affinity? {
                table.columns.first { $0.name.lowercased() == name?.lowercased() }?.affinity
            }
            var fields = terms.map(affinity)
            if table.withoutRowid {
                let indexed = Set(terms.compactMap { $0?.lowercased() })
                let extra = table.primaryKeyColumns.filter { !indexed.contains(table.columns[$0].name.lowercased()) }
                fields += extra.map { table.columns[$0].affinity }
                shapes.append(IndexShape(fields: fields, endsWithRowid: false, index: entry.name))
            } else {
                shapes.append(IndexShape(fields: fields + [nil], endsWithRowid: true, table: table.name, index: entry.name))
            }
        }
        return shapes
    }
}
