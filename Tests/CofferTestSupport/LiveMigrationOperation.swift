import Foundation

/// What app operation `n` of the kill test does: every third updates, deletes or inserts a row of its
/// own (source rows are visited in a stride that reaches each at most once in `sourceRows` operations).
public enum LiveMigrationOperation: Equatable, Sendable {
    /// Sets the body of source row `id` (an upsert: moved first if still in the source).
    case update(id: Int64, body: String)
    /// Deletes source row `id`.
    case delete(id: Int64)
    /// Inserts a new row `id` (above every source id).
    case insert(id: Int64, body: String)

    /// Rows of the kill test's source, ids 1…`sourceRows`.
    public static let sourceRows = 4000

    /// Operation `operation`.
    public static func of(_ operation: Int) -> LiveMigrationOperation {
        let sourceID = Int64(1 + (operation * 1237) % sourceRows)
        switch operation % 3 {
        case 0: return .update(id: sourceID, body: "updated \(operation)")
        case 1: return .delete(id: sourceID)
        default: return .insert(id: Int64(100_000 + operation), body: "inserted \(operation)")
        }
    }
}
