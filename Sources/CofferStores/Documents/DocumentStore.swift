import CofferEngine
import CofferRecords
import Foundation

/// A schemaless, encrypted document store in the spirit of NanoStore: put any dictionary or `Codable`
/// value under a key, then search, sort and aggregate by any of its attributes without declaring them.
///
/// ```swift
/// let people = try DocumentStore(database: database, name: "people")
/// try people.put(["name": "Tom", "last": "Jones", "age": 42, "tags": ["admin"]], for: "tom")
/// let hits = try people.keys(matching: DocumentQuery(.field("last").beginsWith("jo", caseInsensitive: true)))
/// ```
///
/// Every attribute path of a document (`address.city`, `tags[]`) is written to the store's attribute
/// index in the same transaction as the document (see the Documents article), so
/// a search on any of them is an index range scan. Documents can also be grouped into named bags.
///
/// Writes are one transaction on the database's writer (``batch(_:)`` groups many); reads run on reader
/// connections. Documents are checked against ``Limits`` and encoded before a transaction starts.
public final class DocumentStore: Sendable {
    /// How big a document may be; a document over a limit is refused with a ``DocumentError``.
    public struct Limits: Sendable, Equatable {
        /// The deepest nesting of objects and arrays, at most 512 (larger values count as 512).
        public var maximumDepth: Int
        /// The most attributes (object members, array elements and the values under them) per document.
        public var maximumAttributeCount: Int

        /// Creates limits; the defaults suit documents from app servers.
        public init(maximumDepth: Int = 64, maximumAttributeCount: Int = 10_000) {
            self.maximumDepth = min(maximumDepth, DocumentBinary.maximumDepth)
            self.maximumAttributeCount = maximumAttributeCount
        }
    }

    /// The store's name.
    public let name: String
    /// The database the store lives in.
    public let database: Database
    /// The limits documents are checked against.
    public let limits: Limits
    let schema: DocumentSchema

    /// How new and rewritten documents' bodies are stored: `.zstd`, `.dictionary(id)` (a dictionary stored
    /// with `Connection.trainCompressionDictionary(id:from:maximumSize:)`, trained on encoded bodies), `.off`
    /// (plain, still reading bodies compressed before) or nil (plain, read as stored: open a store whose
    /// bodies were compressed with a compression, `.off` at least). Attributes, bags and full-text indexes
    /// stay plain. See the Compression article.
    public let bodyCompression: ColumnCompression?

    /// Opens the store called `name` in `database`, creating its tables if needed; `bodyCompression`
    /// compresses the documents written from now on (see ``bodyCompression``).
    ///
    /// - Throws: ``DocumentError`` (``DocumentError/Reason/invalidName``) when `name` contains NUL, or the
    ///   ``CofferError`` that prevented creating the tables (``ResultCode/invalidConfiguration`` for
    ///   `.dictionaries`, which names a column documents do not have).
    public init(
        database: Database, name: String, limits: Limits = Limits(), bodyCompression: ColumnCompression? = nil
    ) throws {
        try StoreCatalog.validate(name: name, store: name)
        if case .dictionaries = bodyCompression {
            throw CofferError(
                code: .invalidConfiguration,
                message: "document store \(name.debugDescription): a body compression is .zstd, .dictionary(id) or .off")
        }
        self.name = name
        self.database = database
        self.limits = limits
        self.bodyCompression = bodyCompression
        if database.configuration.readOnly {
            self.schema = try database.read { db in
                try DocumentLayout.readingSchema(storeName: name, compression: bodyCompression, in: db)
            }
        } else {
            self.schema = DocumentSchema(storeName: name, compression: bodyCompression)
            try database.write { db in try DocumentLayout.prepare(self, in: db) }
        }
    }

    // MARK: Writing

    /// Saves `document` under `key`, replacing the document there (its bag memberships stay).
    ///
    /// - Throws: ``DocumentError`` when the document is over the store's ``limits`` (nothing is written).
    public func put(_ document: Document, for key: String) throws {
        try put(DocumentValue.object(document), for: key)
    }

    /// Saves any value under `key`; an object's members become its attributes, a scalar is the
    /// attribute at the root path (`""`).
    public func put(_ value: DocumentValue, for key: String) throws {
        let pending = try prepare(value, for: key)
        try database.write { db in try self.save(pending, in: db) }
    }

    /// Saves a `Codable` value under `key`, indexed by the attributes of its JSON form (dates as seconds
    /// since 1970, data as base64).
    ///
    /// ```swift
    /// try people.put(Person(name: "Ada", age: 36), for: "ada")
    /// let ada = try people.value(Person.self, for: "ada")
    /// ```
    public func put<Value: Encodable>(_ value: Value, for key: String) throws {
        try put(try DocumentCoding.document(from: value, store: name, key: key), for: key)
    }

    /// Groups writes into one transaction: all of them happen, or none.
    ///
    /// For the batch's duration the writer's page cache is at least 16 MiB (SQLite takes the memory only
    /// as pages are used, and gives back what is above the connection's own size when the batch ends), so
    /// a large batch does not write index pages to the WAL and read them back again and again.
    ///
    /// ```swift
    /// try people.batch { batch in
    ///     for (key, person) in imported { try batch.put(person, for: key) }
    ///     try batch.add(["tom"], toBag: "favourites")
    /// }
    /// ```
    public func batch<T>(_ body: (DocumentBatch) throws -> T) throws -> T {
        try database.write { db in
            try BatchPageCache.widening(db) {
                let batch = DocumentBatch(
                    store: self, connection: db, buffer: AttributeBuffer(paths: AttributePaths(schema: schema)))
                let result = try body(batch)
                try batch.buffer.flush(self, in: db)
                return result
            }
        }
    }

    /// Deletes the document at `key` (from every bag too); returns whether there was one.
    @discardableResult
    public func delete(_ key: String) throws -> Bool {
        try delete([key]) > 0
    }

    /// Deletes the documents at `keys` (from every bag too); returns how many there were.
    @discardableResult
    public func delete(_ keys: [String]) throws -> Int {
        try database.write { db in try self.delete(keys, in: db) }
    }

    /// Deletes every document of the store; returns how many there were.
    @discardableResult
    public func removeAll() throws -> Int {
        let attributes = "DELETE FROM \(schema.attributes)"
        let paths = "DELETE FROM \(schema.paths)"
        let bags = "DELETE FROM \(schema.bags)"
        let documents = "DELETE FROM \(schema.documents)"
        return try database.write { db in
            try db.execute(sql: attributes)
            try db.execute(sql: paths)
            try db.execute(sql: bags)
            try db.execute(sql: documents)
            return db.changesCount
        }
    }

    // MARK: Reading

    /// The document at `key`, or nil when there is none.
    public func value(for key: String) throws -> DocumentValue? {
        let sql = schema.selectBody
        guard let body = try database.read({ db in try db.fetchValue(Data.self, sql: sql, arguments: [key]) }) else {
            return nil
        }
        return try decode(body, key: key)
    }

    /// The document at `key` when it is an object (a dictionary), or nil.
    public func document(for key: String) throws -> Document? {
        try value(for: key)?.objectValue
    }

    /// The document at `key` decoded as `Value`, or nil when there is none.
    ///
    /// - Throws: ``DocumentError`` (``DocumentError/Reason/decodingFailed``) when it is not a `Value`.
    public func value<Value: Decodable>(_ type: Value.Type, for key: String) throws -> Value? {
        guard let value = try value(for: key) else { return nil }
        return try DocumentCoding.decode(Value.self, from: value, store: name, key: key)
    }

    /// True when a document exists at `key`.
    public func contains(_ key: String) throws -> Bool {
        let sql = schema.selectID
        return try database.read { db in try db.fetchOne(sql: sql, arguments: [key]) != nil }
    }

    /// The number of documents in the store.
    public func count() throws -> Int {
        try count(matching: DocumentQuery())
    }

    // MARK: Shared pieces

    /// A document checked against the limits, encoded and flattened, ready to save.
    struct Pending {
        let key: String
        let body: Data
        let attributes: [Attribute]
    }

    func prepare(_ value: DocumentValue, for key: String) throws -> Pending {
        let attributes = try AttributeFlattener.attributes(
            of: value, maximumDepth: limits.maximumDepth, maximumCount: limits.maximumAttributeCount,
            store: name, key: key)
        return Pending(key: key, body: DocumentBinary.encode(value), attributes: attributes)
    }

    /// Inserts or updates one document and rewrites its attribute rows (no UPSERT in SQLite 3.15, and
    /// `INSERT OR REPLACE` would give it a new id and drop its bag memberships). A replaced document's
    /// old rows are found from its old body (``deleteAttributes(id:body:in:paths:)``). With a `buffer`
    /// (a batch), the new rows are held there and inserted in key order later; a replace first inserts
    /// what the buffer holds, since the replaced document's rows may be among them.
    func save(_ pending: Pending, in db: Connection, buffer: AttributeBuffer? = nil) throws {
        let now = Date().databaseValue
        let paths = buffer?.paths ?? AttributePaths(schema: schema)
        let id: Int64
        if let (existing, oldBody) = try idAndBody(for: pending.key, in: db) {
            try buffer?.flush(self, in: db)
            try db.execute(sql: schema.update, arguments: StatementArguments([.blob(pending.body), now, .integer(existing)]))
            try deleteAttributes(id: existing, body: oldBody, in: db, paths: paths)
            id = existing
        } else {
            try db.execute(
                sql: schema.insert, arguments: StatementArguments([.text(pending.key), .blob(pending.body), now, now]))
            id = db.lastInsertedRowID
        }
        if let buffer {
            try buffer.append(pending.attributes, id: id, store: self, in: db)
        } else {
            try insertAttributes(pending.attributes, id: id, in: db, paths: paths)
        }
    }

    /// One cached statement bound in place per row: no argument array per attribute.
    func insertAttributes(_ attributes: [Attribute], id: Int64, in db: Connection, paths: AttributePaths) throws {
        let insert = try db.cachedStatement(sql: schema.insertAttribute)
        for attribute in attributes {
            try self.insert(attribute, pathID: try paths.id(for: attribute.path, in: db), id: id, with: insert)
        }
    }

    /// Inserts one attribute row of document `id` with `statement` (``DocumentSchema/insertAttribute``).
    func insert(_ attribute: Attribute, pathID: Int64, id: Int64, with statement: Statement) throws {
        try statement.bind(.integer(pathID), toParameter: 1)
        try statement.bind(.integer(attribute.kind.rawValue), toParameter: 2)
        try statement.bind(attribute.value, toParameter: 3)
        try statement.bind(.integer(id), toParameter: 4)
        try statement.bind(.integer(attribute.ordinal), toParameter: 5)
        try statement.bind(attribute.folded.map { .text($0) } ?? .null, toParameter: 6)
        try statement.step()
        statement.reset()
    }

    /// Removes the attribute rows of document `id` whose stored body is `body`: flattening the body
    /// again gives each row's full key, so each is one keyed delete. When the body is damaged, or a
    /// row is not where its key says (a date whose seconds did not survive the round trip through
    /// `Date` to the last bit), the rest go by a scan of the table.
    func deleteAttributes(id: Int64, body: Data, in db: Connection, paths: AttributePaths) throws {
        guard let value = DocumentBinary.decode(body),
            let rows = try? AttributeFlattener.attributes(
                of: value, maximumDepth: DocumentBinary.maximumDepth, maximumCount: .max, store: name, key: nil)
        else {
            return try db.execute(sql: schema.deleteAttributesScanning, arguments: [id])
        }
        let delete = try db.cachedStatement(sql: schema.deleteAttribute)
        var deleted = 0
        for row in rows {
            guard let pathID = try paths.existingID(for: row.path, in: db) else { continue }
            try delete.bind(.integer(pathID), toParameter: 1)
            try delete.bind(.integer(row.kind.rawValue), toParameter: 2)
            try delete.bind(row.value, toParameter: 3)
            try delete.bind(.integer(id), toParameter: 4)
            try delete.bind(.integer(row.ordinal), toParameter: 5)
            try delete.step()
            delete.reset()
            deleted += db.changesCount
        }
        if deleted < rows.count { try db.execute(sql: schema.deleteAttributesScanning, arguments: [id]) }
    }

    /// The id and stored body of the document at `key`, or nil.
    func idAndBody(for key: String, in db: Connection) throws -> (Int64, Data)? {
        var found: (Int64, Data)?
        try db.forEachRow(sql: schema.selectIDAndBody, arguments: [key]) { found = ($0.int64(at: 0), $0.data(at: 1)) }
        return found
    }

    func delete(_ keys: [String], in db: Connection, paths: AttributePaths? = nil) throws -> Int {
        let paths = paths ?? AttributePaths(schema: schema)
        var deleted = 0
        for key in keys {
            guard let (id, body) = try idAndBody(for: key, in: db) else { continue }
            try deleteDocument(id: id, body: body, in: db, paths: paths)
            deleted += 1
        }
        return deleted
    }

    /// Deletes document `id` and its attribute rows (the trigger removes its bag memberships).
    func deleteDocument(id: Int64, body: Data, in db: Connection, paths: AttributePaths) throws {
        try deleteAttributes(id: id, body: body, in: db, paths: paths)
        try db.execute(sql: schema.deleteDocument, arguments: [id])
    }

    func decode(_ body: Data, key: String) throws -> DocumentValue {
        guard let value = DocumentBinary.decode(body) else {
            throw DocumentError(reason: .decodingFailed, store: name, key: key, detail: "the stored document is damaged")
        }
        return value
    }
}

/// Writes grouped into one transaction by ``DocumentStore/batch(_:)``.
///
/// The attribute rows of the batch's documents are inserted in key order, some thousands at a time
/// (see the Documents article), all within the batch's transaction.
public struct DocumentBatch {
    let store: DocumentStore
    let connection: Connection
    let buffer: AttributeBuffer

    /// Saves `document` under `key`.
    public func put(_ document: Document, for key: String) throws {
        try put(.object(document), for: key)
    }

    /// Saves any value under `key`.
    public func put(_ value: DocumentValue, for key: String) throws {
        try store.save(store.prepare(value, for: key), in: connection, buffer: buffer)
    }

    /// Saves a `Codable` value under `key`.
    public func put<Value: Encodable>(_ value: Value, for key: String) throws {
        try put(try DocumentCoding.document(from: value, store: store.name, key: key), for: key)
    }

    /// Deletes the documents at `keys`; returns how many there were.
    @discardableResult
    public func delete(_ keys: [String]) throws -> Int {
        try buffer.flush(store, in: connection)
        return try store.delete(keys, in: connection, paths: buffer.paths)
    }
}
