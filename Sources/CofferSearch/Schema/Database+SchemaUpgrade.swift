import CofferEngine
import CofferRecords

extension Database {
    /// Brings the schema up to the declared tables in one write transaction: call it once at open,
    /// before first use. See ``Connection/upgradeSchema(for:)``.
    ///
    /// ```swift
    /// let database = try Database(path: path, configuration: configuration)
    /// try database.upgradeSchema(for: [Conversation.self, Message.self])
    /// ```
    @discardableResult
    public func upgradeSchema(for tables: [any TableRecord.Type]) throws -> SchemaUpgradeReport {
        try write { db in try db.upgradeSchema(for: tables) }
    }
}
