import CofferEngine
import CofferRecords

/// What to fetch from a ``DocumentStore``: a predicate, optionally within a bag, in an order, one page.
///
/// ```swift
/// let page = DocumentQuery(DocumentField("age") > 30, orderedBy: [.descending("age"), .ascending("last")],
///                          limit: 20, offset: 40)
/// let people = try store.documents(matching: page)
/// ```
public struct DocumentQuery: Sendable, Hashable {
    /// Which documents match.
    public var predicate: DocumentPredicate
    /// Only documents in this bag, when set.
    public var bag: String?
    /// Sort keys, first one first; documents that tie on all of them come in key order.
    public var ordering: [DocumentOrdering]
    /// At most this many results (all when nil).
    public var limit: Int?
    /// Results skipped before the first one returned.
    public var offset: Int

    /// Creates a query.
    public init(
        _ predicate: DocumentPredicate = .all, inBag bag: String? = nil, orderedBy ordering: [DocumentOrdering] = [],
        limit: Int? = nil, offset: Int = 0
    ) {
        self.predicate = predicate
        self.bag = bag
        self.ordering = ordering
        self.limit = limit
        self.offset = offset
    }
}

/// A sort key: an attribute path and a direction.
///
/// Documents sort by the kind of the value first (missing < null < Boolean < number < date < string <
/// data < object < array), then by value; a document missing the attribute sorts first ascending and
/// last descending. On an array path (`tags[]`) the smallest element counts ascending, the largest
/// descending.
public struct DocumentOrdering: Sendable, Hashable {
    /// The attribute sorted on.
    public var path: DocumentPath
    /// True for largest first.
    public var descending: Bool

    /// Smallest first.
    public static func ascending(_ path: DocumentPath) -> DocumentOrdering {
        DocumentOrdering(path: path, descending: false)
    }

    /// Largest first.
    public static func descending(_ path: DocumentPath) -> DocumentOrdering {
        DocumentOrdering(path: path, descending: true)
    }
}

/// An aggregate over the numbers at one attribute path.
public enum DocumentAggregate: String, Sendable {
    /// How many numbers there are.
    case count
    /// Their sum (0 when there are none).
    case sum = "total"
    /// Their mean.
    case average = "avg"
    /// The smallest.
    case minimum = "min"
    /// The largest.
    case maximum = "max"
}

/// One document of a query's results.
public struct DocumentMatch: Sendable, Hashable {
    /// The document's key.
    public let key: String
    /// The document.
    public let value: DocumentValue

    /// The document when it is an object.
    public var document: Document? { value.objectValue }
}
