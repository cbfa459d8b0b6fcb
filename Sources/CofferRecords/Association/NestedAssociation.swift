// Nested eager loading: a to-many association whose records come with their own associated records,
// still in a fixed number of statements whatever the number of origins.

import CofferEngine

/// A to-many association from `Origin` to `Destination` records that loads each destination with its own
/// associated records, as `Element`s: `(Destination, Nested)` for `including(required:)`,
/// `(Destination, Nested?)` for `including(optional:)`, `(Destination, [Nested])` for `including(all:)`.
/// The to-many association's filters and ordering apply to its records, the nested one's to its own.
///
/// ```swift
/// let authors = try Author.including(all: Author.books.order { [$0.year.desc] }
///     .including(required: Book.publisher.filter { $0.country == "FR" })).fetchAll(db)
/// // [(Author, [(Book, Publisher)])], in two statements whatever the number of authors
/// ```
public struct NestedAssociation<Origin: TableRecord, Destination: TableRecord, Element>: @unchecked Sendable {
    // Unchecked: `loadElements` captures only Sendable association values (and the record types' metatypes).
    var link: AssociationLink<Origin, Destination>
    /// Each key's elements, for the destination records whose key column holds one of the keys.
    var loadElements: ([DatabaseValue], Connection) throws -> [DatabaseValue: [Element]]
}

extension Association where Cardinality == ToMany {
    /// This association's records, each paired with its record of `nested` (records without one are
    /// left out), loaded by one joined statement per chunk of origin keys.
    public func including<Nested, NestedKey>(
        required nested: ToOneAssociation<Destination, Nested, NestedKey>
    ) -> NestedAssociation<Origin, Destination, (Destination, Nested)> {
        let link = link
        return NestedAssociation(link: link) { keys, db in
            try EagerLoad.pairs(
                of: link.destinationQuery.including(required: nested), column: link.destinationColumn, in: keys, db
            ) {
                try $0.record(Nested.self)
            }
        }
    }

    /// This association's records, each paired with its record of `nested` or nil, loaded by one
    /// left-joined statement per chunk of origin keys.
    public func including<Nested, NestedKey>(
        optional nested: ToOneAssociation<Destination, Nested, NestedKey>
    ) -> NestedAssociation<Origin, Destination, (Destination, Nested?)> {
        let link = link
        return NestedAssociation(link: link) { keys, db in
            try EagerLoad.pairs(
                of: link.destinationQuery.including(optional: nested), column: link.destinationColumn, in: keys, db
            ) {
                $0.isAllNull ? nil : try $0.record(Nested.self)
            }
        }
    }

    /// This association's records, each with all its records of `nested`: one statement per chunk of
    /// origin keys for this association's records, then one per chunk of their keys for `nested`'s.
    public func including<Nested, NestedKey>(
        all nested: ToManyAssociation<Destination, Nested, NestedKey>
    ) -> NestedAssociation<Origin, Destination, (Destination, [Nested])> {
        let (link, nestedLink) = (link, nested.link)
        return NestedAssociation(link: link) { keys, db in
            let keyIndex = try EagerLoad.columnIndex(of: link.destinationColumn, in: Destination.self)
            let nestedKeyIndex = try EagerLoad.columnIndex(of: nestedLink.originColumn, in: Destination.self)
            let destinationBuffer = RecordBuffer<Destination>()
            var destinationKeys: [(key: DatabaseValue, nestedKey: DatabaseValue)] = []
            try EagerLoad.forEachMatch(of: link, in: keys, db, into: destinationBuffer) { _, statement in
                destinationKeys.append((statement.value(at: keyIndex), statement.value(at: nestedKeyIndex)))
            }
            let destinations = destinationBuffer.takeArray()
            let nestedDestinationIndex = try EagerLoad.columnIndex(of: nestedLink.destinationColumn, in: Nested.self)
            let nestedBuffer = RecordBuffer<Nested>()
            var nestedIndices: [DatabaseValue: [Int]] = [:]
            try EagerLoad.forEachMatch(of: nestedLink, in: destinationKeys.map(\.nestedKey), db, into: nestedBuffer) {
                index, statement in
                nestedIndices[statement.value(at: nestedDestinationIndex), default: []].append(index)
            }
            let nested = nestedBuffer.takeArray()
            var elements: [DatabaseValue: [(Destination, [Nested])]] = [:]
            for (destination, keys) in zip(destinations, destinationKeys) {
                let nestedRecords = (nestedIndices[keys.nestedKey] ?? []).map { nested[$0] }
                elements[keys.key, default: []].append((destination, nestedRecords))
            }
            return elements
        }
    }
}

extension EagerLoad {
    /// The pairs `join` fetches whose left `column` is among `keys`, by chunks of keys, under each key.
    static func pairs<Left: TableRecord, Right: TableRecord, RightValue>(
        of join: JoinQuery<Left, Right, RightValue>, column: String, in keys: [DatabaseValue], _ db: Connection,
        right: (StatementDecoder) throws -> RightValue
    ) throws -> [DatabaseValue: [(Left, RightValue)]] {
        let keyIndex = try columnIndex(of: column, in: Left.self)
        let otherArguments = try join.selectFragment.renderTemplate().values.count
        var pairs: [DatabaseValue: [(Left, RightValue)]] = [:]
        try forEachChunk(of: keys, otherArguments: otherArguments) { chunk in
            var restricted = join
            restricted.filters.append(membership(of: column, in: Left.self, chunk))
            try restricted.forEachPair(db, right: right) { left, right, statement in
                pairs[statement.value(at: keyIndex), default: []].append((left, right))
            }
        }
        return pairs
    }
}

/// Origins fetched with a nested association's elements: one statement for the origins, then the
/// association's own (see ``NestedAssociation``). Made by `including(all:)` with a ``NestedAssociation``.
public struct IncludingAllNestedQuery<Origin: TableRecord, Destination: TableRecord, Element>: Sendable {
    var origins: Query<Origin>
    var association: NestedAssociation<Origin, Destination, Element>

    /// Every origin the query matches, in its order, with its elements in the association's order.
    public func fetchAll(_ db: Connection) throws -> [(Origin, [Element])] {
        let (records, slots) = try EagerLoad.origins(of: origins, keyedBy: association.link.originColumn, db)
        let elements = try association.loadElements(slots.keys, db)
        return zip(records, slots.rowSlots).map { record, slot in
            (record, slot < 0 ? [] : elements[slots.keys[slot]] ?? [])
        }
    }
}

extension Query {
    /// The matching records with a nested association's elements (see ``NestedAssociation``).
    public func including<Destination, Element>(
        all association: NestedAssociation<Root, Destination, Element>
    ) -> IncludingAllNestedQuery<Root, Destination, Element> {
        IncludingAllNestedQuery(origins: self, association: association)
    }
}

extension TableRecord {
    /// Every record with a nested association's elements (see ``NestedAssociation``).
    public static func including<Destination, Element>(
        all association: NestedAssociation<Self, Destination, Element>
    ) -> IncludingAllNestedQuery<Self, Destination, Element> {
        Query().including(all: association)
    }
}
