import CofferEngine
import CofferRecords

/// The ids of attribute paths (the store's `"doc-path:N"` table, see ``DocumentSchema``), looked up
/// once per path per write transaction.
///
/// One instance serves one write transaction (a put, a delete, a batch) and is dropped with it: an id
/// it hands out was read or inserted in that transaction, so a rollback can never leave an id cached
/// that the file does not hold, and another connection's writes need no invalidation.
final class AttributePaths {
    private let schema: DocumentSchema
    private var ids: [String: Int64] = [:]

    init(schema: DocumentSchema) {
        self.schema = schema
    }

    /// The id of `path`, inserting the path when the store has never held it.
    func id(for path: String, in db: Connection) throws -> Int64 {
        if let id = try existingID(for: path, in: db) { return id }
        let insert = try db.cachedStatement(sql: schema.insertPath)
        try insert.bind(.text(path), toParameter: 1)
        try insert.step()
        insert.reset()
        let id = db.lastInsertedRowID
        ids[path] = id
        return id
    }

    /// The id of `path`, or nil when the store has never held it (so no attribute row has it).
    func existingID(for path: String, in db: Connection) throws -> Int64? {
        if let id = ids[path] { return id }
        let select = try db.cachedStatement(sql: schema.selectPathID)
        try select.bind(.text(path), toParameter: 1)
        defer { select.reset() }
        guard try select.step() else { return nil }
        let id = select.int64(at: 0)
        ids[path] = id
        return id
    }
}
