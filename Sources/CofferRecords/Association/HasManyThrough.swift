import CofferEngine

/// An association from `Origin` records to `Destination` records reached through `Middle` records: two
/// associations chained, such as an author's reviews through their books. Made by
/// ``TableRecord/hasMany(_:through:using:)``; its filters and ordering apply to the destination records,
/// those of the two associations it chains apply to their own records.
///
/// ```swift
/// extension Author { static let reviews = hasMany(Review.self, through: books, using: Book.reviews) }
/// let critics = try Author.including(all: Author.reviews.order { [$0.stars.desc] }).fetchAll(db)
/// // [(Author, [Review])], in three queries whatever the number of authors
/// ```
public struct HasManyThroughAssociation<Origin: TableRecord, Middle: TableRecord, Destination: TableRecord>: Sendable {
    var first: AssociationLink<Origin, Middle>
    var second: AssociationLink<Middle, Destination>

    /// Keeps destination records where `predicate` is true.
    public func filter<E: TypedExpression>(_ predicate: (Destination.Columns) -> E) -> Self
    where E.Root == Destination, E.Value == Bool {
        var association = self
        association.second.destinationQuery = second.destinationQuery.filter(predicate)
        return association
    }

    /// Sorts each origin's destination records.
    public func order(_ orderings: (Destination.Columns) -> [Ordering<Destination>]) -> Self {
        var association = self
        association.second.destinationQuery = second.destinationQuery.order(orderings)
        return association
    }
}

extension TableRecord {
    /// The records of `Destination` that `second` associates with the records `first` associates with
    /// this record: an author's reviews through their books, or a many-to-many relation through a table
    /// of pairs (`hasMany(Tag.self, through: taggings, using: Tagging.tag)`).
    ///
    /// ```swift
    /// extension Author { static let reviews = hasMany(Review.self, through: books, using: Book.reviews) }
    /// ```
    public static func hasMany<Middle, Destination, FirstKey, SecondKey, FirstCardinality, SecondCardinality>(
        _ destination: Destination.Type, through first: Association<Self, Middle, FirstKey, FirstCardinality>,
        using second: Association<Middle, Destination, SecondKey, SecondCardinality>
    ) -> HasManyThroughAssociation<Self, Middle, Destination> {
        HasManyThroughAssociation(first: first.link, second: second.link)
    }

    /// Every record with all the records associated through another table (see ``IncludingAllThroughQuery``).
    public static func including<Middle, Destination>(
        all association: HasManyThroughAssociation<Self, Middle, Destination>
    ) -> IncludingAllThroughQuery<Self, Middle, Destination> {
        Query().including(all: association)
    }
}

extension Query {
    /// The matching records with all the records associated through another table (see
    /// ``IncludingAllThroughQuery``).
    public func including<Middle, Destination>(
        all association: HasManyThroughAssociation<Root, Middle, Destination>
    ) -> IncludingAllThroughQuery<Root, Middle, Destination> {
        IncludingAllThroughQuery(origins: self, association: association)
    }
}

/// Origins fetched with all the records associated through another table: one statement for the
/// origins, one for the middle records (`WHERE key IN (…)`), one for the destinations (`WHERE key IN
/// (…)`), each of the last two split in chunks under ``IncludingAllQuery/maximumVariables``, stitched in
/// memory. Made by `including(all:)` with a ``HasManyThroughAssociation``.
public struct IncludingAllThroughQuery<Origin: TableRecord, Middle: TableRecord, Destination: TableRecord>: Sendable {
    var origins: Query<Origin>
    var association: HasManyThroughAssociation<Origin, Middle, Destination>

    /// Every origin the query matches, in its order, with its destination records in the association's
    /// order (within one chunk of middle keys), once per middle record that reaches them.
    public func fetchAll(_ db: Connection) throws -> [(Origin, [Destination])] {
        let first = association.first
        let second = association.second
        let (records, slots) = try EagerLoad.origins(of: origins, keyedBy: first.originColumn, db)

        // Each origin key's middle records, as the keys they reach destinations by.
        let firstKeyIndex = try EagerLoad.columnIndex(of: first.destinationColumn, in: Middle.self)
        let middleKeyIndex = try EagerLoad.columnIndex(of: second.originColumn, in: Middle.self)
        var middleKeys = [[DatabaseValue]](repeating: [], count: slots.keys.count)
        var allMiddleKeys: [DatabaseValue] = []
        try EagerLoad.forEachMatch(of: first, in: slots.keys, distinct: true, db, into: RecordBuffer<Middle>()) {
            _, statement in
            guard let slot = slots.slot(ofKeyAt: firstKeyIndex, in: statement) else { return }
            let middleKey = statement.value(at: middleKeyIndex)
            middleKeys[slot].append(middleKey)
            allMiddleKeys.append(middleKey)
        }

        // Each middle key's destinations, as their indices in the order the destination query gave them.
        let secondKeyIndex = try EagerLoad.columnIndex(of: second.destinationColumn, in: Destination.self)
        let buffer = RecordBuffer<Destination>()
        var destinationIndices: [DatabaseValue: [Int]] = [:]
        try EagerLoad.forEachMatch(of: second, in: allMiddleKeys, db, into: buffer) { index, statement in
            destinationIndices[statement.value(at: secondKeyIndex), default: []].append(index)
        }
        let destinations = buffer.takeArray()
        return zip(records, slots.rowSlots).map { record, slot in
            let reached = (slot < 0 ? [] : middleKeys[slot]).flatMap { destinationIndices[$0] ?? [] }
            return (record, reached.sorted().map { destinations[$0] })
        }
    }
}
