// Lazy loading (faulting): an association's records loaded for one origin the first time they are read
// inside a read or write closure, from that closure's snapshot.

import CofferEngine

extension Association where Cardinality == ToMany {
    /// `origin`'s associated records, loaded from the snapshot of the `read` or `write` closure running on
    /// this thread the first time they are read in it (later reads there reuse them, until the closure
    /// changes a row). Declare a relationship property with it:
    ///
    /// ```swift
    /// extension Author {
    ///     var books: [Book] { get throws { try Author.books.records(of: self) } }
    /// }
    /// let books = try database.read { _ in try author.books }   // one query: WHERE authorID = ?
    /// ```
    ///
    /// Throws ``CofferError`` with code `apiMisuse` when no read or write closure runs on this thread (the
    /// records belong to a snapshot, and there is none), never loading from a connection another thread
    /// uses.
    public func records(of origin: Origin) throws -> [Destination] {
        try link.lazilyLoaded(for: origin) { query, db, key in try query.fetchAll(db, arguments: [key]) } ?? []
    }
}

extension Association where Cardinality == ToOne {
    /// `origin`'s associated record, or nil, loaded from the snapshot of the `read` or `write` closure
    /// running on this thread the first time it is read in it (see ``Association/records(of:)``).
    ///
    /// ```swift
    /// extension Book {
    ///     var author: Author? { get throws { try Book.author.record(of: self) } }
    /// }
    /// ```
    public func record(of origin: Origin) throws -> Destination? {
        try link.lazilyLoaded(for: origin) { query, db, key in try query.fetchOne(db, arguments: [key]) } ?? nil
    }
}

extension AssociationLink {
    /// What `load` returns for `origin`'s key on the current transaction's connection, loaded once per
    /// snapshot; nil without a query when the key is NULL.
    func lazilyLoaded<Loaded>(
        for origin: Origin, _ load: (PreparedQuery<Destination>, Connection, DatabaseValue) throws -> Loaded
    ) throws -> Loaded? {
        guard let db = Connection.current else {
            throw CofferError(
                code: .apiMisuse,
                message:
                    "\(Origin.tableName) → \(Destination.tableName) read outside a read or write closure: "
                    + "a lazily loaded relationship loads from the snapshot of the closure running on this thread")
        }
        let key = try origin.columnValues()[EagerLoad.columnIndex(of: originColumn, in: Origin.self)]
        guard key != .null else { return nil }
        let query = try singleKeyQuery()
        // Unwrapped before the cast: a missing entry cast to an optional `Loaded` would succeed as nil.
        if let entry = db.faults.value(shape: query.shapeID, key: key, on: db), let cached = entry as? Loaded {
            return cached
        }
        let loaded = try load(query, db, key)
        db.faults.store(loaded, shape: query.shapeID, key: key, on: db)
        return loaded
    }
}
