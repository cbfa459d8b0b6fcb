import CofferEngine

/// The part every association shares: the two columns that match, and the query over the associated rows
/// (its filters and ordering apply to them when they are loaded).
struct AssociationLink<Origin: TableRecord, Destination: TableRecord>: Sendable {
    /// The origin's column the match reads.
    let originColumn: String
    /// The destination's column the match reads.
    let destinationColumn: String
    /// Filters and ordering of the associated rows.
    var destinationQuery = Query<Destination>() {
        didSet { queries = AssociationQueries() }
    }
    /// The destination query restricted to its key, prepared the first time a load needs it.
    private(set) var queries = AssociationQueries<Destination>()

    init(originColumn: String, destinationColumn: String) {
        self.originColumn = originColumn
        self.destinationColumn = destinationColumn
    }

    /// `"origin"."column" = "destination"."column"`, rendered qualified inside joins.
    var matchCondition: SQLFragment {
        SQLFragment([.column(table: Origin.tableName, name: originColumn)]) + SQLFragment(raw: " = ")
            + SQLFragment([.column(table: Destination.tableName, name: destinationColumn)])
    }
}

/// The cardinality of a to-one association: at most one associated record per origin.
public enum ToOne {}

/// The cardinality of a to-many association: any number of associated records per origin.
public enum ToMany {}

/// An association from `Origin` records to `Destination` records matched through a foreign key holding
/// `Key` values; `Cardinality` (``ToOne`` or ``ToMany``) says which eager loads it offers.
///
/// Made by ``TableRecord/belongsTo(_:using:)``, ``TableRecord/hasOne(_:using:)`` and
/// ``TableRecord/hasMany(_:using:)``; its filters and ordering apply to the associated records.
///
/// ```swift
/// let pairs = try Book.including(required: Book.author).fetchAll(db)            // [(Book, Author)]
/// let shelves = try Author.including(all: Author.books.order { [$0.title.asc] }).fetchAll(db)
/// // [(Author, [Book])], in two queries whatever the number of authors
/// ```
public struct Association<Origin: TableRecord, Destination: TableRecord, Key: Hashable & Sendable, Cardinality>:
    Sendable
{
    var link: AssociationLink<Origin, Destination>

    /// Keeps associated records where `predicate` is true.
    public func filter<E: TypedExpression>(_ predicate: (Destination.Columns) -> E) -> Self
    where E.Root == Destination, E.Value == Bool {
        var association = self
        association.link.destinationQuery = link.destinationQuery.filter(predicate)
        return association
    }

    /// Sorts the associated records: each origin's, for a to-many association; the joined pairs after the
    /// origin query's own ordering, for a to-one association.
    public func order(_ orderings: (Destination.Columns) -> [Ordering<Destination>]) -> Self {
        var association = self
        association.link.destinationQuery = link.destinationQuery.order(orderings)
        return association
    }
}

/// An association to at most one `Destination` per `Origin` (`belongsTo`, `hasOne`).
public typealias ToOneAssociation<Origin: TableRecord, Destination: TableRecord, Key: Hashable & Sendable> =
    Association<Origin, Destination, Key, ToOne>

/// An association to any number of `Destination` records per `Origin` (`hasMany`).
public typealias ToManyAssociation<Origin: TableRecord, Destination: TableRecord, Key: Hashable & Sendable> =
    Association<Origin, Destination, Key, ToMany>

extension TableRecord {
    /// The record of `Parent` this record's foreign key `key` references (the key is in this table).
    ///
    /// ```swift
    /// static let author = belongsTo(Author.self, using: authorKey)
    /// ```
    public static func belongsTo<Parent, Key>(
        _ parent: Parent.Type, using key: ForeignKey<Self, Parent, Key>
    ) -> ToOneAssociation<Self, Parent, Key> {
        ToOneAssociation(link: AssociationLink(originColumn: key.childColumnName, destinationColumn: key.parentColumnName))
    }

    /// The one record of `Child` whose foreign key `key` references this record (the key is in `Child`;
    /// make it UNIQUE, or the join yields one pair per child).
    public static func hasOne<Child, Key>(
        _ child: Child.Type, using key: ForeignKey<Child, Self, Key>
    ) -> ToOneAssociation<Self, Child, Key> {
        ToOneAssociation(link: AssociationLink(originColumn: key.parentColumnName, destinationColumn: key.childColumnName))
    }

    /// The records of `Child` whose foreign key `key` references this record.
    ///
    /// ```swift
    /// extension Author { static let books = hasMany(Book.self, using: Book.authorKey) }
    /// ```
    public static func hasMany<Child, Key>(
        _ child: Child.Type, using key: ForeignKey<Child, Self, Key>
    ) -> ToManyAssociation<Self, Child, Key> {
        ToManyAssociation(link: AssociationLink(originColumn: key.parentColumnName, destinationColumn: key.childColumnName))
    }
}
