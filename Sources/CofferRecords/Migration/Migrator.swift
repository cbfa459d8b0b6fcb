import CofferEngine
import Foundation

/// Explicit, ordered, named schema migrations, each applied once in its own transaction and recorded in
/// the `coffer_migrations` table.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.register("v1: create tables") { db in
///     try db.upgradeSchema(for: [Conversation.self, Message.self])
/// }
/// migrator.register("v2: drop message.legacyFlag") { db in
///     try db.rebuildTable(Message.self)
/// }
/// try migrator.migrate(database)
/// ```
///
/// Migrations run in registration order; those already recorded are skipped, so `migrate` can run at
/// every launch. A migration that throws is rolled back and stops the run: the ones before it stay.
public struct Migrator: Sendable {
    /// The table migrations are recorded in.
    public static let recordTable = "coffer_migrations"

    private var migrations: [(name: String, body: @Sendable (Connection) throws -> Void)] = []

    /// An empty migrator.
    public init() {}

    /// Registers a migration. Names must be unique and must never change once shipped.
    public mutating func register(_ name: String, _ body: @escaping @Sendable (Connection) throws -> Void) {
        migrations.append((name, body))
    }

    /// The registered migration names, in order.
    public var names: [String] { migrations.map(\.name) }

    /// Applies the pending migrations, each in its own write transaction; returns the names applied.
    @discardableResult
    public func migrate(_ database: Database) throws -> [String] {
        try migrate(database, control: nil)
    }

    /// ``migrate(_:)`` as a sequence of progress events, in migrations (applied or found recorded) of those
    /// registered, ending with `.finished(names applied)`. It starts at once, on a background thread.
    ///
    /// Stop iterating (cancel the task, or `break`) to stop: the migration running then is interrupted and
    /// rolled back, the ones before it stay applied, and the next `migrate` goes on from there.
    ///
    /// ```swift
    /// for try await event in migrator.migrateWithProgress(database) {
    ///     if case .progress(let done, let total) = event { print("migrations: \(done)/\(total)") }
    /// }
    /// ```
    public func migrateWithProgress(_ database: Database) -> AsyncThrowingStream<ProgressEvent<[String]>, any Error> {
        database.progressStream { control in try self.migrate(database, control: control) }
    }

    private func migrate(_ database: Database, control: WorkControl?) throws -> [String] {
        if let duplicate = Dictionary(grouping: names, by: { $0 }).first(where: { $0.value.count > 1 })?.key {
            throw CofferError(code: .apiMisuse, message: "migration '\(duplicate)' is registered twice")
        }
        return try database.spans.run("coffer.migrate") {
            try database.write { db in try Self.createRecordTable(db) }
            var applied: [String] = []
            control?.progress(completed: 0, total: migrations.count)
            for (index, migration) in migrations.enumerated() {
                try control?.checkCancellation()
                if try apply(migration, database, control) { applied.append(migration.name) }
                control?.progress(completed: index + 1, total: migrations.count)
            }
            return applied
        }
    }

    /// Applies one migration unless it is recorded; returns whether it ran.
    ///
    /// Foreign key enforcement is switched off around the transaction (SQLite only allows that outside
    /// one), so that rebuilding a parent table neither fails nor cascades; the migration must leave no
    /// violation behind, which `PRAGMA foreign_key_check` verifies before commit.
    private func apply(
        _ migration: (name: String, body: @Sendable (Connection) throws -> Void), _ database: Database,
        _ control: WorkControl?
    ) throws -> Bool {
        try database.writeWithoutTransaction { db in
            let enforced = try db.pragmaRows("PRAGMA foreign_keys").first?[0] == .integer(1)
            if enforced { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
            defer { if enforced { try? db.execute(sql: "PRAGMA foreign_keys = ON") } }
            return try db.inTransaction(.immediate) {
                guard try !Self.isApplied(migration.name, db) else { return false }
                if let control {
                    try control.latch.runStatements(on: db) { try migration.body(db) }
                } else {
                    try migration.body(db)
                }
                if enforced, let violation = try db.pragmaRows("PRAGMA foreign_key_check").first {
                    throw CofferError(
                        code: .constraintForeignKey,
                        message: "migration '\(migration.name)' leaves a foreign key violation in \(violation[0])")
                }
                try db.execute(
                    sql: "INSERT INTO \(SQLIdentifier.quote(Self.recordTable)) (name, appliedAt) VALUES (?, ?)",
                    arguments: [migration.name, Date()])
                return true
            }
        }
    }

    /// The names of the migrations recorded in the database, in the order they were applied.
    public func appliedMigrations(_ db: Connection) throws -> [String] {
        try Self.createRecordTable(db)
        return try db.fetchAll(sql: "SELECT name FROM \(SQLIdentifier.quote(Self.recordTable)) ORDER BY rowid")
            .compactMap { $0["name"] }
    }

    private static func createRecordTable(_ db: Connection) throws {
        let table = SQLIdentifier.quote(recordTable)
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(table) (name TEXT PRIMARY KEY NOT NULL, appliedAt REAL NOT NULL)")
    }

    private static func isApplied(_ name: String, _ db: Connection) throws -> Bool {
        try db.fetchValue(
            Bool.self, sql: "SELECT EXISTS (SELECT 1 FROM \(SQLIdentifier.quote(recordTable)) WHERE name = ?)", arguments: [name])
            ?? false
    }
}
