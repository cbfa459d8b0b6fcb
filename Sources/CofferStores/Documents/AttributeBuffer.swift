import CofferEngine
import CofferRecords
import Foundation

/// The attribute rows of a ``DocumentBatch``'s documents, held back and inserted in key order.
///
/// A document's rows go to twenty places of the attribute B-tree (one per path), and consecutive
/// documents' values for one path are far apart (`user-10@…`, `user-11@…` after `user-1@…`), so rows
/// inserted as documents come touch a different leaf page almost every time, and with a table larger
/// than the page cache each touch can be a read and a decryption. Sorted by the table's key
/// `(path_id, kind, value, doc_id, ordinal)` first, a run of rows walks the B-tree once, in order. At most
/// ``capacity`` rows are held (memory stays bounded however large the batch); the rest is inserted
/// before the batch's transaction commits, and before anything in the batch replaces or deletes a
/// document (whose rows may still be held here).
///
/// The order only serves locality: a comparison that differs from SQLite's (non-ASCII strings compare
/// by Unicode here, by bytes there) costs a few page visits, never a wrong row.
final class AttributeBuffer {
    /// The most rows held before they are inserted.
    static let capacity = 32_768

    private struct Row {
        let attribute: Attribute
        let pathID: Int64
        let id: Int64
    }

    /// The path ids of the batch's transaction.
    let paths: AttributePaths
    private var rows: [Row] = []

    init(paths: AttributePaths) {
        self.paths = paths
    }

    /// Holds `attributes` of document `id`, inserting what is held when the buffer is full.
    func append(_ attributes: [Attribute], id: Int64, store: DocumentStore, in db: Connection) throws {
        rows.reserveCapacity(Self.capacity)
        for attribute in attributes {
            rows.append(Row(attribute: attribute, pathID: try paths.id(for: attribute.path, in: db), id: id))
        }
        if rows.count >= Self.capacity { try flush(store, in: db) }
    }

    /// Inserts every held row, in key order.
    func flush(_ store: DocumentStore, in db: Connection) throws {
        guard !rows.isEmpty else { return }
        let insert = try db.cachedStatement(sql: store.schema.insertAttribute)
        try rows.withUnsafeBufferPointer { held in
            // Sorting positions moves 4 bytes per swap, and rows are compared and read where they are:
            // copying one (three references) to compare it cost as much as the comparison.
            var order = Array(0..<Int32(held.count))
            order.sort { Self.precedes(held, Int($0), Int($1)) }
            for position in order.lazy.map({ Int($0) }) {
                try store.insert(held[position].attribute, pathID: held[position].pathID, id: held[position].id, with: insert)
            }
        }
        rows.removeAll(keepingCapacity: true)
    }

    private static func precedes(_ rows: UnsafeBufferPointer<Row>, _ left: Int, _ right: Int) -> Bool {
        if rows[left].pathID != rows[right].pathID { return rows[left].pathID < rows[right].pathID }
        let (leftKind, rightKind) = (rows[left].attribute.kind, rows[right].attribute.kind)
        if leftKind != rightKind { return leftKind.rawValue < rightKind.rawValue }
        if let order = valueOrder(rows[left].attribute.value, rows[right].attribute.value) { return order }
        if rows[left].id != rows[right].id { return rows[left].id < rows[right].id }
        return rows[left].attribute.ordinal < rows[right].attribute.ordinal
    }

    /// Whether `left` sorts before `right` in the index, or nil when they sort together.
    private static func valueOrder(_ left: DatabaseValue, _ right: DatabaseValue) -> Bool? {
        switch (left, right) {
        case (.integer(let l), .integer(let r)): return l == r ? nil : l < r
        case (.real(let l), .real(let r)): return l == r ? nil : l < r
        case (.integer(let l), .real(let r)): return Double(l) == r ? nil : Double(l) < r
        case (.real(let l), .integer(let r)): return l == Double(r) ? nil : l < Double(r)
        case (.text(let l), .text(let r)): return l == r ? nil : l < r
        default: return nil
        }
    }
}
