import CofferEngine
import CofferRecords

extension DocumentStore {
    /// Puts the documents at `keys` into the bag called `bag` (NanoStore's `NSFNanoBag`): a named
    /// collection; a document may be in any number of bags. Keys without a document, and documents
    /// already in the bag, are skipped. Returns how many were added.
    ///
    /// ```swift
    /// try people.add(["tom", "ada"], toBag: "speakers")
    /// let speakers = try people.documents(matching: DocumentQuery(DocumentField("age") > 30, inBag: "speakers"))
    /// ```
    @discardableResult
    public func add(_ keys: [String], toBag bag: String) throws -> Int {
        try database.write { db in try self.add(keys, toBag: bag, in: db) }
    }

    /// Takes the documents at `keys` out of `bag` (the documents stay); returns how many were in it.
    @discardableResult
    public func remove(_ keys: [String], fromBag bag: String) throws -> Int {
        let sql = "DELETE FROM \(schema.bags) WHERE bag = ? AND doc_id = (SELECT id FROM \(schema.documents) WHERE key = ?)"
        return try database.write { db in
            var removed = 0
            for key in keys {
                try db.execute(sql: sql, arguments: [bag, key])
                removed += db.changesCount
            }
            return removed
        }
    }

    /// Empties `bag` (its documents stay in the store); returns how many it held.
    @discardableResult
    public func removeBag(_ bag: String) throws -> Int {
        let sql = "DELETE FROM \(schema.bags) WHERE bag = ?"
        return try database.write { db in
            try db.execute(sql: sql, arguments: [bag])
            return db.changesCount
        }
    }

    /// The keys of the documents in `bag`, sorted.
    public func keys(inBag bag: String) throws -> [String] {
        try keys(matching: DocumentQuery(inBag: bag, limit: nil))
    }

    /// The names of the bags that hold at least one document, sorted.
    public func bagNames() throws -> [String] {
        let sql = "SELECT DISTINCT bag FROM \(schema.bags) ORDER BY bag"
        return try database.read { db in try db.fetchAll(sql: sql).map { try $0.decode(String.self, at: 0) } }
    }

    /// The bags the document at `key` is in, sorted.
    public func bags(containing key: String) throws -> [String] {
        let sql = """
            SELECT b.bag FROM \(schema.bags) AS b JOIN \(schema.documents) AS d ON d.id = b.doc_id
            WHERE d.key = ? ORDER BY b.bag
            """
        return try database.read { db in
            try db.fetchAll(sql: sql, arguments: [key]).map { try $0.decode(String.self, at: 0) }
        }
    }

    func add(_ keys: [String], toBag bag: String, in db: Connection) throws -> Int {
        let sql = "INSERT OR IGNORE INTO \(schema.bags)(bag, doc_id) SELECT ?, id FROM \(schema.documents) WHERE key = ?"
        var added = 0
        for key in keys {
            try db.execute(sql: sql, arguments: [bag, key])
            added += db.changesCount
        }
        return added
    }
}

extension DocumentBatch {
    /// Puts the documents at `keys` into `bag` (see ``DocumentStore/add(_:toBag:)``).
    @discardableResult
    public func add(_ keys: [String], toBag bag: String) throws -> Int {
        try store.add(keys, toBag: bag, in: connection)
    }
}
