// Schema — the tables, indexes, views and triggers described by sqlite_master (the table B-tree rooted at
// page 1), or inferred from orphan records when page 1 is gone.
//
// sqlite_master rows have five columns: type, name, tbl_name, rootpage, sql. Accepted: type one of
// table/index/view/trigger with a UTF-8 name; tables and indexes need a root page in 2…pageCount (an
// automatic index — sqlite_autoindex_*, sql NULL — is accepted as an index); tables need CREATE TABLE sql
// that SQLite itself accepts (``CreateStatementReader``). A virtual table (root page 0, CREATE VIRTUAL
// TABLE) is listed in ``Schema/virtualTables``; when the library has its module, its shadow tables are
// marked with it (``TableDescription/virtualTable``) so the writer fills the shadow tables the recreated
// virtual table owns; otherwise they stay ordinary tables. Anything else is ignored rather than guessed.

/// The schema read from a file.
public struct Schema: Sendable, Codable {
    /// Every accepted sqlite_master entry, in file order.
    public var entries: [SchemaEntry]
    /// Tables with parsed columns, in file order.
    public var tables: [TableDescription]
    /// Virtual tables, in file order (their shadow tables are in ``tables``).
    var virtualTables: [VirtualTableDescription] = []
    /// Tables whose CREATE TABLE SQLite refuses (an unknown collation, say), with its reason. Their pages
    /// are not claimed by a table: their rows come back as orphans.
    public var refusedTables: [SchemaIssue] = []
    /// Whether sqlite_master could be read at all (page 1 authenticated and parsed).
    public var isReadable: Bool
    /// Pages of the sqlite_master tree that failed to read (bad HMAC).
    public var unreadablePages: [UInt32] = []
    /// Whether every sqlite_master entry was read: the whole tree walked and every record decoded. Only
    /// then does every tree of the file belong to a table or index the schema names.
    public var isComplete = false
    /// sqlite_master leaves found by scanning when page 1 was unreadable (see ``recoverOrphanLeaves(from:claimed:)``).
    public var recoveredLeaves: [UInt32] = []
    /// `PRAGMA user_version` from the header (offset 60), when page 1 was readable.
    public var userVersion: Int32?
    /// `PRAGMA application_id` from the header (offset 68), when page 1 was readable.
    public var applicationID: Int32?

    /// Indexes (entries of kind `.index` with a root page).
    public var indexes: [SchemaEntry] { entries.filter { $0.kind == .index } }

    /// Reads sqlite_master from page 1 of `source`. Pages of the schema tree are added to `visited`.
    public static func read(from source: PageSource, visited: inout Set<UInt32>) -> Schema {
        let walker = TreeWalker(source: source)
        let overflow = OverflowReader(source: source)
        var rows: [[SalvagedValue]] = []
        var overflowPages: [UInt32] = []
        var recordsLost = false
        let stats = walker.walk(root: 1, visited: &visited, expectTable: true) { page, cells in
            guard page.type == .tableLeaf else { return }
            for cell in cells {
                guard case .success(let payload) = overflow.payload(of: cell) else {
                    recordsLost = true
                    continue
                }
                overflowPages += payload.pages
                if let values = RecordDecoder.decode(payload.bytes) { rows.append(values) } else { recordsLost = true }
            }
        }
        visited.formUnion(overflowPages)
        var schema = Schema(entries: [], tables: [], isReadable: stats.pagesVisited > 0, unreadablePages: stats.unreadablePages)
        schema.isComplete = stats.pagesVisited > 0 && stats.holes.isEmpty && !recordsLost
        var encoding = TextEncoding.utf8
        if case .success(let page1) = source.page(1) {
            let header = ByteView(page1)
            schema.userVersion = header.u32(60).map { Int32(bitPattern: $0) }
            schema.applicationID = header.u32(68).map { Int32(bitPattern: $0) }
            encoding = TextEncoding(header: page1) ?? .utf8
        }
        // A UTF-16 database stores its names and SQL as UTF-16 too.
        schema.add(rows: rows.map { $0.map(encoding.utf8) }, pageCount: source.pageCount)
        return schema
    }

    /// When page 1 is lost but sqlite_master spanned several pages, its leaves survive as orphans. This scans
    /// every unclaimed page for table leaves whose every record is a well-formed sqlite_master row (five
    /// fields: type table/index/view/trigger, UTF-8 name and table name, integer root page, and SQL that
    /// starts with CREATE), adds their entries and claims the pages and their overflow chains. A user table
    /// is not mistaken for one: all its records would have to look exactly like schema rows.
    /// Costs one extra pass over the file, only when page 1 is unreadable.
    public mutating func recoverOrphanLeaves(from source: PageSource, claimed: inout Set<UInt32>) {
        guard source.pageCount >= 2 else { return }
        let walker = TreeWalker(source: source)
        let overflow = OverflowReader(source: source)
        var found: [[SalvagedValue]] = []
        for pageNumber in 2...source.pageCount where !claimed.contains(pageNumber) {
            guard case .success(let parsed) = walker.parse(pageNumber), parsed.page.type == .tableLeaf,
                !parsed.cells.isEmpty
            else { continue }
            var rows: [[SalvagedValue]] = []
            var chains: [UInt32] = []
            for cell in parsed.cells {
                guard case .success(let payload) = overflow.payload(of: cell),
                    let values = RecordDecoder.decode(payload.bytes), Schema.looksLikeSchemaRow(values)
                else { break }
                chains += payload.pages
                rows.append(values)
            }
            guard rows.count == parsed.cells.count else { continue }
            found += rows
            claimed.insert(pageNumber)
            claimed.formUnion(chains)
            recoveredLeaves.append(pageNumber)
        }
        add(rows: found, pageCount: source.pageCount)
    }

    static func looksLikeSchemaRow(_ row: [SalvagedValue]) -> Bool {
        guard row.count == 5, case .text(let type) = row[0], case .text = row[1], case .text = row[2],
            let kind = SchemaEntryKind(rawValue: String(decoding: type, as: UTF8.self))
        else { return false }
        switch (kind, row[3], row[4]) {
        case (.table, .integer, .text(let sql)), (.index, .integer, .text(let sql)), (.view, .integer(0), .text(let sql)),
            (.trigger, .integer(0), .text(let sql)):
            return String(decoding: sql.prefix(6), as: UTF8.self).uppercased() == "CREATE"
        case (.index, .integer, .null):
            return true
        default:
            return false
        }
    }

    /// Validates sqlite_master records and adds them; SQLite reads their CREATE statements.
    mutating func add(rows: [[SalvagedValue]], pageCount: UInt32) {
        let reader = CreateStatementReader()
        for row in rows { add(row: row, pageCount: pageCount, reader: reader) }
        linkShadowTables()
    }

    /// Validates one sqlite_master record and adds it.
    private mutating func add(row: [SalvagedValue], pageCount: UInt32, reader: CreateStatementReader) {
        guard row.count == 5, case .text(let typeBytes) = row[0], case .text(let nameBytes) = row[1],
            case .text(let tableBytes) = row[2],
            let kind = SchemaEntryKind(rawValue: String(decoding: typeBytes, as: UTF8.self)),
            let name = String(validatingUTF8Bytes: nameBytes), let tableName = String(validatingUTF8Bytes: tableBytes)
        else { return }
        var root: UInt32 = 0
        if case .integer(let value) = row[3], value >= 0, value <= Int64(pageCount) { root = UInt32(value) }
        var sql: String?
        if case .text(let bytes) = row[4] { sql = String(validatingUTF8Bytes: bytes) }
        if kind == .table, root == 0, let sql {
            if let virtual = reader.virtualTable(sql: sql, name: name),
                !virtualTables.contains(where: { $0.name.lowercased() == name.lowercased() })
            {
                virtualTables.append(virtual)
            }
            return
        }
        switch kind {
        case .table, .index:
            guard root >= 2 else { return }
        case .view, .trigger:
            guard sql != nil else { return }
        }
        if kind == .index, sql == nil, !name.hasPrefix("sqlite_autoindex_") { return }
        let entry = SchemaEntry(kind: kind, name: name, tableName: tableName, rootPage: root, sql: sql)
        if kind == .table {
            guard let sql, let parsed = reader.table(sql: sql, name: name) else {
                refusedTables.append(
                    SchemaIssue(kind: "table", name: name, reason: "SQLite refuses its CREATE TABLE (\(reader.lastRefusal))"))
                return
            }
            tables.append(
                TableDescription(
                    name: name, rootPage: root, sql: sql, columns: parsed.columns,
                    rowidAliasColumn: parsed.rowidAliasColumn, withoutRowid: parsed.withoutRowid,
                    primaryKeyColumns: parsed.primaryKeyColumns, isInferred: false))
        }
        entries.append(entry)
    }

    /// Marks each shadow table of an available virtual table with it.
    private mutating func linkShadowTables() {
        for virtual in virtualTables where virtual.isAvailable {
            let shadows = Set(virtual.shadowTables.map { $0.lowercased() })
            for index in tables.indices where shadows.contains(tables[index].name.lowercased()) {
                tables[index].virtualTable = virtual
            }
        }
    }
}

extension String {
    /// Decodes UTF-8 bytes, or returns `nil` if they are not valid UTF-8.
    init?(validatingUTF8Bytes bytes: [UInt8]) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var scalars = String.UnicodeScalarView()
        loop: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar): scalars.append(scalar)
            case .emptyInput: break loop
            case .error: return nil
            }
        }
        self = String(scalars)
    }
}

extension Schema {
    /// The shadow-table suffixes of the virtual-table modules SQLite 3.15 has (FTS3/FTS4, R*Tree).
    private static let shadowSuffixes = [
        ["_content", "_segments", "_segdir", "_docsize", "_stat"], ["_node", "_parent", "_rowid"],
    ]

    /// What the report says when sqlite_master was not read completely: the lost entries themselves, and
    /// each virtual table whose shadow tables survived but whose CREATE VIRTUAL TABLE did not (its shadow
    /// tables come back as ordinary tables). Empty for a complete schema.
    public var lostEntryIssues: [SchemaIssue] {
        guard !isComplete else { return [] }
        let list = unreadablePages.map(String.init).joined(separator: ", ")
        let pages = unreadablePages.isEmpty ? "" : unreadablePages.count == 1 ? " (page \(list))" : " (pages \(list))"
        var issues = [
            SchemaIssue(
                kind: "schema", name: "sqlite_master",
                reason: isReadable && recoveredLeaves.isEmpty
                    ? "entries lost with damaged schema pages\(pages): the tables, indexes, virtual tables, views and triggers they declared are not recreated; their rows come back in recovered_* tables"
                    : "page 1 lost: objects not found on surviving schema pages are not recreated by name; every surviving table tree comes back as a recovered_* table"
            )
        ]
        let names = Set(tables.map { $0.name.lowercased() })
        let virtual = Set(virtualTables.map { $0.name.lowercased() })
        var orphaned: [String] = []
        for table in tables {
            for suffixes in Self.shadowSuffixes {
                guard let suffix = suffixes.first(where: { table.name.lowercased().hasSuffix($0) }) else { continue }
                let base = String(table.name.dropLast(suffix.count))
                let present = suffixes.filter { names.contains((base + $0).lowercased()) }
                guard present.count >= 2, !virtual.contains(base.lowercased()),
                    !orphaned.contains(where: { $0.lowercased() == base.lowercased() })
                else { continue }
                orphaned.append(base)
            }
        }
        issues += orphaned.map {
            SchemaIssue(
                kind: "virtual table", name: $0,
                reason:
                    "its CREATE VIRTUAL TABLE was lost with the schema: not recreated; its shadow tables are kept as ordinary tables"
            )
        }
        return issues
    }
}
