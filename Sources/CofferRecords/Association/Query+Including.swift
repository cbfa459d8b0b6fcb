// Eager loading: an association's records fetched with their origins in a fixed number of statements.

import CofferEngine

/// Origins fetched with all their associated records: one statement for the origins, then one per
/// chunk of at most ``IncludingAllQuery/maximumVariables`` bound values (the distinct origin keys and the association's own arguments) for the associated
/// records (`WHERE key IN (…)`), stitched in memory. Made by ``Query/including(all:)``.
///
/// ```swift
/// let shelves = try Author.order { [$0.name.asc] }
///     .including(all: Author.books.filter { $0.year >= 2000 }.order { [$0.year.desc] })
///     .fetchAll(db)                                   // [(Author, [Book])]
/// ```
public struct IncludingAllQuery<Origin: TableRecord, Destination: TableRecord, Key: Hashable & Sendable>: Sendable {
    /// SQLite's default limit on bound variables per statement (`SQLITE_MAX_VARIABLE_NUMBER`, 999 in
    /// 3.15.2), the most keys plus other arguments one statement of associated records binds.
    public static var maximumVariables: Int { EagerLoad.maximumVariables }

    var origins: Query<Origin>
    var link: AssociationLink<Origin, Destination>

    /// Every origin the query matches, in its order, with its associated records in the association's
    /// order (an origin with no match, or a NULL key, gets none).
    public func fetchAll(_ db: Connection) throws -> [(Origin, [Destination])] {
        let (records, slots) = try EagerLoad.origins(of: origins, keyedBy: link.originColumn, db)
        let keyIndex = try EagerLoad.columnIndex(of: link.destinationColumn, in: Destination.self)
        // The matches in one buffer with each one's key slot beside it, then moved into one array per slot
        // built once: per row, only non-generic work outside the fetch loop (see
        // `PreparedQuery.appendRecords`).
        let matches = RecordBuffer<Destination>()
        var matchSlots: [Int] = []
        try EagerLoad.forEachMatch(of: link, in: slots.keys, distinct: true, db, into: matches) { _, statement in
            matchSlots.append(slots.slot(ofKeyAt: keyIndex, in: statement) ?? -1)
        }
        let destinations = matches.takeGrouped(bySlot: matchSlots, slotCount: slots.keys.count)
        var result: [(Origin, [Destination])] = []
        result.reserveCapacity(records.count)
        // Indices, not `zip`: its unspecialized iterator costs about 3,000 instructions a step.
        let rowSlots = slots.rowSlots
        for index in records.indices {
            let slot = rowSlots[index]
            result.append((records[index], slot < 0 ? [] : destinations[slot]))
        }
        return result
    }
}

/// The statements behind eager loads: associated rows fetched by chunks of keys.
enum EagerLoad {
    /// SQLite's default limit on bound variables per statement (`SQLITE_MAX_VARIABLE_NUMBER`, 999 in 3.15.2).
    static let maximumVariables = 999

    /// The records `query` fetches, in its order, with their values of `column` (the eager load's key).
    static func origins<Record: TableRecord>(
        of query: Query<Record>, keyedBy column: String, _ db: Connection
    ) throws -> (records: [Record], slots: KeySlots) {
        let keyIndex = try columnIndex(of: column, in: Record.self)
        let (sql, arguments) = try query.selectFragment.render()
        return try db.withStatement(sql: sql, arguments: arguments) { statement in
            var slots = KeySlots()
            let records = try StatementDecoder.records(Record.self, from: statement) { _ in
                slots.appendRow(keyAt: keyIndex, of: statement)
            }
            return (records, slots)
        }
    }

    /// Runs `link`'s destination query restricted to the rows whose key is among `keys` (see
    /// ``forEachChunk(of:otherArguments:_:)``), appending each record to `records` and calling `body` with
    /// its index there and the statement on its row (to read its key or other columns), in the query's
    /// order within each chunk. Each chunk's statement is the link's prepared query for its padded key count.
    static func forEachMatch<Origin: TableRecord, Record: TableRecord>(
        of link: AssociationLink<Origin, Record>, in keys: [DatabaseValue], distinct: Bool = false, _ db: Connection,
        into records: RecordBuffer<Record>, _ body: (Int, Statement) throws -> Void
    ) throws {
        try forEachChunk(of: keys, distinct: distinct, otherArguments: try link.otherArgumentCount()) { chunk in
            try link.membershipQuery(count: chunk.count).appendRecords(db, arguments: chunk, to: records, body)
        }
    }

    /// Calls `body` with `keys` (NULLs and repeats dropped, unless the caller says they are `distinct`
    /// and not NULL already, as ``KeySlots/keys`` are) in chunks of at most ``maximumVariables`` bound
    /// values beside a statement's `otherArguments`, each padded to a power of two.
    static func forEachChunk(
        of keys: [DatabaseValue], distinct: Bool = false, otherArguments: Int, _ body: ([DatabaseValue]) throws -> Void
    ) throws {
        var seen = Set<DatabaseValue>()
        let keys = distinct ? keys : keys.filter { $0 != .null && seen.insert($0).inserted }
        let chunkSize = max(1, maximumVariables - otherArguments)
        var start = 0
        while start < keys.count {
            var chunk = Array(keys[start..<min(start + chunkSize, keys.count)])
            start += chunk.count
            // Padded to a power of two (repeating a key changes nothing in an IN list), so that the
            // connection's statement cache keeps a dozen shapes of this query, not one per key count.
            chunk += repeatElement(chunk[chunk.count - 1], count: paddedCount(chunk.count, limit: chunkSize) - chunk.count)
            try body(chunk)
        }
    }

    /// `"table"."column" IN (?, …)` over `keys`, bound as values (the nested joins' chunks).
    static func membership<Record: TableRecord>(
        of column: String, in record: Record.Type, _ keys: [DatabaseValue]
    ) -> SQLFragment {
        SQLFragment([.column(table: Record.tableName, name: column)]) + SQLFragment(raw: " IN ")
            + SQLFragment.join(keys.map { SQLFragment(value: $0) }, separator: ", ").parenthesized
    }

    /// The smallest power of two at least `count`, or `limit` when that is smaller.
    static func paddedCount(_ count: Int, limit: Int) -> Int {
        var padded = 1
        while padded < count { padded *= 2 }
        return min(padded, limit)
    }

    /// The position of `name` among the columns a record fetch of `Record` selects.
    static func columnIndex<Record: TableRecord>(of name: String, in record: Record.Type) throws -> Int {
        guard let index = Record.columnDefinitions.firstIndex(where: { $0.name == name }) else {
            throw CofferError(code: .apiMisuse, message: "\(Record.tableName) has no column \(name)")
        }
        return index
    }
}

extension Query {
    /// The matching records with all their associated records (see ``IncludingAllQuery``).
    public func including<Destination, Key>(
        all association: ToManyAssociation<Root, Destination, Key>
    ) -> IncludingAllQuery<Root, Destination, Key> {
        IncludingAllQuery(origins: self, link: association.link)
    }

    /// The matching records that have an associated record, paired with it, in one joined statement; the
    /// association's filters apply to the join and its ordering follows this query's.
    ///
    /// ```swift
    /// let pairs = try Book.filter { $0.year > 2000 }.including(required: Book.author).fetchAll(db)
    /// ```
    public func including<Destination, Key>(
        required association: ToOneAssociation<Root, Destination, Key>
    ) -> JoinQuery<Root, Destination, Destination> {
        joining(association.link, isLeft: false)
    }

    /// Every matching record paired with its associated record, or nil when it has none (or none passes
    /// the association's filters), in one left-joined statement.
    public func including<Destination, Key>(
        optional association: ToOneAssociation<Root, Destination, Key>
    ) -> JoinQuery<Root, Destination, Destination?> {
        joining(association.link, isLeft: true)
    }

    /// The join of an association: its filters join the ON clause (so that a left join keeps origins whose
    /// associated record they reject), its ordering follows this query's.
    private func joining<Destination, RightValue>(
        _ link: AssociationLink<Root, Destination>, isLeft: Bool
    ) -> JoinQuery<Root, Destination, RightValue> {
        var condition = link.matchCondition
        if !link.destinationQuery.filters.isEmpty {
            condition = Self.conjunction([condition] + link.destinationQuery.filters)
        }
        var join = JoinQuery<Root, Destination, RightValue>(base: self, isLeft: isLeft, condition: condition)
        join.orderings = link.destinationQuery.orderings
        return join
    }
}

extension TableRecord {
    /// Every record with all its associated records (see ``Query/including(all:)``).
    public static func including<Destination, Key>(
        all association: ToManyAssociation<Self, Destination, Key>
    ) -> IncludingAllQuery<Self, Destination, Key> {
        Query().including(all: association)
    }

    /// Every record that has an associated record, paired with it (see ``Query/including(required:)``).
    public static func including<Destination, Key>(
        required association: ToOneAssociation<Self, Destination, Key>
    ) -> JoinQuery<Self, Destination, Destination> {
        Query().including(required: association)
    }

    /// Every record paired with its associated record or nil (see ``Query/including(optional:)``).
    public static func including<Destination, Key>(
        optional association: ToOneAssociation<Self, Destination, Key>
    ) -> JoinQuery<Self, Destination, Destination?> {
        Query().including(optional: association)
    }
}
